"""Password reset through Django's views, linked from the login page: the answer is the same whether an address
is known or not; the e-mail (received by a real SMTP server) carries a link on SITE_URL that works once; the new
password ends every session of the user; at most PASSWORD_RESET_EMAILS_PER_HOUR e-mails an address an hour."""

import re

import pytest
from django.conf import settings
from django.test import Client

from core.models import OutboundEmail
from tests.factories import PASSWORD, UserFactory
from tests.mail import html_of, text_of

NEW_PASSWORD = "a quiet orbit over Tycho"
LINK = re.compile(r"https?://\S+(/accounts/reset/[^/\s]+/[^/\s]+/)")

pytestmark = pytest.mark.django_db(transaction=True)


def ask_reset(email: str, browser: Client | None = None):
    return (browser or Client()).post("/accounts/password_reset/", {"email": email})


def link_path(message) -> str:
    return LINK.search(text_of(message)).group(1)


def set_password(browser: Client, path: str, password: str = NEW_PASSWORD):
    """Opens the link as a person does: Django moves the token into the session and shows the form there."""
    form_page = browser.get(path, follow=True)
    assert form_page.status_code == 200 and "Choose a new password" in form_page.content.decode()
    return browser.post(form_page.redirect_chain[-1][0], {"new_password1": password, "new_password2": password})


def logged_in(user, password: str = PASSWORD) -> Client:
    browser = Client()
    assert browser.post("/accounts/login/", {"username": user.username, "password": password}).status_code == 302
    return browser


def test_the_login_page_links_the_reset(client):
    assert 'href="/accounts/password_reset/"' in client.get("/accounts/login/").content.decode()


def test_a_known_address_gets_a_link_that_sets_a_new_password_once(smtp_server):
    ada = UserFactory(email="ada@example.com")
    response = ask_reset("ADA@example.com")
    assert (response.status_code, response["Location"]) == (302, "/accounts/password_reset/done/")

    [message] = smtp_server.wait_for(1)
    assert (message["To"], message["Subject"]) == ("ada@example.com", "Reset your password on Tracker")
    assert f"{settings.SITE_URL}{link_path(message)}" in text_of(message)
    assert f'href="{settings.SITE_URL}{link_path(message)}"' in html_of(message)
    assert ada.username in text_of(message)

    browser = Client()
    done = set_password(browser, link_path(message))
    assert (done.status_code, done["Location"]) == (302, "/accounts/reset/done/")
    ada.refresh_from_db()
    assert ada.check_password(NEW_PASSWORD)
    assert logged_in(ada, NEW_PASSWORD)

    again = Client().get(link_path(message), follow=True)
    assert "This link does not work" in again.content.decode()


def test_an_unknown_address_gets_the_same_answer_and_no_email(smtp_server):
    UserFactory(email="ada@example.com")
    unknown, known = ask_reset("nobody@example.com"), ask_reset("ada@example.com")
    assert (unknown.status_code, unknown["Location"]) == (known.status_code, known["Location"])
    assert Client().get(unknown["Location"]).content == Client().get(known["Location"]).content
    assert [message["To"] for message in smtp_server.wait_for(1)] == ["ada@example.com"]
    assert OutboundEmail.objects.count() == 1


def test_at_most_five_emails_an_address_an_hour_with_the_same_answer(smtp_server):
    UserFactory(email="ada@example.com")
    answers = {(response.status_code, response["Location"]) for response in
               [ask_reset("ada@example.com") for _ in range(settings.PASSWORD_RESET_EMAILS_PER_HOUR + 2)]}
    assert answers == {(302, "/accounts/password_reset/done/")}
    assert len(smtp_server.wait_for(5)) == 5
    assert OutboundEmail.objects.count() == 5
    assert ask_reset("bob@example.com").status_code == 302  # another address counts apart


@pytest.mark.parametrize("email", ["ada", "ada@example.com\r\nBcc: eve@example.com", "", "a" * 250 + "@b.com"])
def test_a_malformed_address_is_refused_by_the_form_and_sends_nothing(email):
    UserFactory(email="ada@example.com")
    response = ask_reset(email)
    assert response.status_code == 200 and 'class="errorlist"' in response.content.decode()
    assert not OutboundEmail.objects.exists()


def test_a_tampered_link_does_nothing(smtp_server):
    ada = UserFactory(email="ada@example.com")
    ask_reset("ada@example.com")
    path = link_path(smtp_server.wait_for(1)[0])
    tampered = path[:-2] + ("a/" if path[-2] != "a" else "b/")
    page = Client().get(tampered, follow=True)
    assert "This link does not work" in page.content.decode()
    ada.refresh_from_db()
    assert ada.check_password(PASSWORD)


def test_a_reset_ends_every_session_of_the_user(smtp_server):
    ada, bob = UserFactory(email="ada@example.com"), UserFactory()
    sessions = [logged_in(ada), logged_in(ada)]
    others = logged_in(bob)
    ask_reset("ada@example.com")
    assert set_password(Client(), link_path(smtp_server.wait_for(1)[0])).status_code == 302
    for browser in sessions:
        assert browser.get("/projects/")["Location"].startswith("/accounts/login/")
    assert others.get("/projects/").status_code == 200


def test_the_reset_page_answers_503_alike_when_the_counters_are_out_of_reach(refused_redis):
    UserFactory(email="ada@example.com")
    known, unknown = ask_reset("ada@example.com"), ask_reset("nobody@example.com")
    assert known.status_code == unknown.status_code == 503 and known.content == unknown.content
    assert not OutboundEmail.objects.exists()


def test_requests_from_one_address_are_limited_a_minute(settings):
    settings.LOGIN_RATE_LIMIT_PER_MINUTE = 2
    UserFactory(email="ada@example.com")
    assert [ask_reset(f"someone{n}@example.com").status_code for n in range(2)] == [302, 302]
    limited = ask_reset("ada@example.com")
    assert limited.status_code == 429 and int(limited["Retry-After"]) >= 1
    assert "Too many password reset requests from your address." in limited.content.decode()
    assert not OutboundEmail.objects.exists()
