"""/profile/: the logged-in user edits their name, e-mail address and e-mail notifications, by the rules of
/api/v1/me/update."""

import pytest
from django.test import Client

from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db

PAGE = "/profile/"


@pytest.fixture
def ada():
    return UserFactory(username="ada", name="Ada Lovelace", email="ada@example.com")


@pytest.fixture
def browser(ada):
    client = Client(enforce_csrf_checks=True)
    client.force_login(ada)
    return client


def post_form(browser, **fields):
    """The form as a browser sends it: what the page shows, with the CSRF token, changed by `fields`."""
    token = browser.get(PAGE).context["csrf_token"]
    body = {"name": "Ada Lovelace", "email": "ada@example.com", "email_notifications": "instant",
            "current_password": "", "csrfmiddlewaretoken": str(token), **fields}
    return browser.post(PAGE, body)


def account_of(user) -> tuple:
    user.refresh_from_db()
    return user.name, user.email, user.email_notifications


def test_anonymous_is_sent_to_login(db):
    response = Client().get(PAGE)
    assert (response.status_code, response["Location"]) == (302, f"/accounts/login/?next={PAGE}")


def test_the_page_shows_the_account_and_the_header_links_it(browser):
    page = browser.get(PAGE).content.decode()
    assert 'value="Ada Lovelace"' in page and 'value="ada@example.com"' in page
    assert 'type="radio" name="email_notifications" value="instant"' in page
    assert 'value="instant" id="id_email_notifications_0" required checked' in page
    assert '<a href="/profile/">Profile</a>' in browser.get("/projects/").content.decode()


def test_name_and_notifications_are_saved_without_a_password(browser, ada):
    response = post_form(browser, name="Countess", email_notifications="digest")
    assert (response.status_code, response["Location"]) == (302, PAGE)
    assert "Your profile is saved." in browser.get(PAGE).content.decode()
    assert account_of(ada) == ("Countess", "ada@example.com", "digest")


def test_a_new_address_needs_the_current_password(browser, ada):
    for password, error in (("", "The current password is required to change email"),
                            ("guess", "The current password is wrong")):
        response = post_form(browser, email="new@example.com", name="Changed", current_password=password)
        assert response.status_code == 200
        assert error in response.content.decode()
        assert account_of(ada) == ("Ada Lovelace", "ada@example.com", "instant")
    assert post_form(browser, email="new@example.com", current_password=PASSWORD).status_code == 302
    assert account_of(ada) == ("Ada Lovelace", "new@example.com", "instant")


@pytest.mark.parametrize(("fields", "error"), [
    ({"email": "not an address", "current_password": PASSWORD}, "Enter a valid email address."),
    ({"email": "", "current_password": PASSWORD}, "This field is required."),
    ({"email_notifications": "weekly"}, "Select a valid choice. weekly is not one of the available choices."),
    ({"name": "x" * 151}, "Ensure this value has at most 150 characters (it has 151)."),
])
def test_a_bad_value_is_shown_and_changes_nothing(browser, ada, fields, error):
    response = post_form(browser, **fields)
    assert response.status_code == 200
    assert error in response.content.decode()
    assert account_of(ada) == ("Ada Lovelace", "ada@example.com", "instant")


def test_an_account_without_an_address_may_keep_none(db):
    nobody = UserFactory(username="nobody", email="")
    client = Client()
    client.force_login(nobody)
    response = client.post(PAGE, {"name": "No Body", "email": "", "email_notifications": "off"})
    assert response.status_code == 302
    assert account_of(nobody) == ("No Body", "", "off")


def test_a_post_without_the_csrf_token_is_refused(browser, ada):
    response = browser.post(PAGE, {"name": "Mallory", "email": "ada@example.com", "email_notifications": "off"})
    assert response.status_code == 403
    assert account_of(ada) == ("Ada Lovelace", "ada@example.com", "instant")
