"""The unsubscribe link of notification e-mails (RFC 8058 one-click), spoken to over HTTP without a login."""

import pytest
from django.test import Client

from accounts.models import EmailNotifications
from notifications.unsubscribe import unsubscribe_token, unsubscribe_url
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def mail_client():
    """A mail client: no session cookie, no CSRF token, and CSRF checked as for any browser."""
    return Client(enforce_csrf_checks=True)


@pytest.fixture
def ada():
    return UserFactory(username="ada", email="ada@example.com")


def path_of(token: str) -> str:
    return f"/unsubscribe/{token}/"


def preference_of(user) -> str:
    user.refresh_from_db()
    return user.email_notifications


def test_the_url_is_absolute_on_site_url(ada, settings):
    settings.SITE_URL = "https://tracker.example.org"
    assert unsubscribe_url(ada) == f"https://tracker.example.org/unsubscribe/{unsubscribe_token(ada)}/"
    assert unsubscribe_token(ada).startswith(f"{ada.pk}:")


def test_one_click_post_turns_the_emails_off_without_login_or_csrf_token(mail_client, ada):
    response = mail_client.post(path_of(unsubscribe_token(ada)), {"List-Unsubscribe": "One-Click"})
    assert response.status_code == 200
    assert "No more notification e-mails go to <strong>ada@example.com</strong>" in response.content.decode()
    assert preference_of(ada) == EmailNotifications.OFF


def test_the_page_asks_first_and_its_button_posts_to_the_same_url(mail_client, ada):
    response = mail_client.get(path_of(unsubscribe_token(ada)))
    page = response.content.decode()
    assert response.status_code == 200
    assert '<form method="post" class="stacked">' in page  # no action: the form posts to the page's own URL
    assert 'data-action="unsubscribe"' in page
    assert preference_of(ada) == EmailNotifications.INSTANT


def test_a_digest_reader_is_turned_off_too_and_a_second_post_changes_nothing(mail_client, ada):
    ada.email_notifications = EmailNotifications.DIGEST
    ada.save()
    for _ in range(2):
        assert mail_client.post(path_of(unsubscribe_token(ada))).status_code == 200
    assert preference_of(ada) == EmailNotifications.OFF


def tampered_tokens(ada, bob) -> dict[str, str]:
    token = unsubscribe_token(ada)
    user_id, signature = token.split(":")
    flipped = ("A" if signature[0] != "A" else "B") + signature[1:]
    return {
        "signature changed": f"{user_id}:{flipped}",
        "another user's id with ada's signature": f"{bob.pk}:{signature}",
        "no signature": user_id,
        "not an id": f"x{user_id}:{signature}",
        "a user that does not exist": f"{bob.pk + 1000}:{signature}",
        "garbage": "not-a-token",
    }


@pytest.mark.parametrize("method", ["get", "post"])
def test_a_tampered_token_shows_a_clear_page_and_changes_nothing(mail_client, ada, method):
    bob = UserFactory(username="bob")
    for case, token in tampered_tokens(ada, bob).items():
        response = getattr(mail_client, method)(path_of(token))
        assert response.status_code == 400, case
        assert "This unsubscribe link is not valid" in response.content.decode(), case
    assert (preference_of(ada), preference_of(bob)) == (EmailNotifications.INSTANT, EmailNotifications.INSTANT)


def test_a_link_sent_to_a_former_address_no_longer_works(mail_client, ada):
    token = unsubscribe_token(ada)
    ada.email = "ada@new.example.com"
    ada.save()
    assert mail_client.post(path_of(token)).status_code == 400
    assert preference_of(ada) == EmailNotifications.INSTANT
    assert mail_client.post(path_of(unsubscribe_token(ada))).status_code == 200
    assert preference_of(ada) == EmailNotifications.OFF


def test_one_users_link_leaves_other_users_alone(mail_client, ada):
    bob = UserFactory(username="bob")
    assert mail_client.post(path_of(unsubscribe_token(ada))).status_code == 200
    assert (preference_of(ada), preference_of(bob)) == (EmailNotifications.OFF, EmailNotifications.INSTANT)


def test_other_methods_are_refused(mail_client, ada):
    assert mail_client.put(path_of(unsubscribe_token(ada))).status_code == 405
    assert preference_of(ada) == EmailNotifications.INSTANT
