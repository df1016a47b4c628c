"""GET /api/v1/me and POST /api/v1/me/update: the caller's own account, its e-mail address and its e-mail
notifications."""

import pytest

from accounts.hashers import password_check_turn
from accounts.models import EmailNotifications, User
from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db

ME, UPDATE = "/api/v1/me", "/api/v1/me/update"


@pytest.fixture
def ada():
    return UserFactory(username="ada", name="Ada Lovelace", email="ada@example.com")


def account_of(user) -> tuple:
    user.refresh_from_db()
    return user.name, user.email, user.email_notifications


def shape(user, **changes) -> dict:
    return {"user": {"id": user.id, "username": user.username, "name": user.name, "email": user.email,
                     "email_notifications": user.email_notifications, **changes}}


def test_me_shows_the_callers_account(client_for, ada):
    UserFactory()  # somebody else, not shown
    response = client_for(ada).get(ME)
    assert (response.status_code, response.json()) == (200, {"user": {
        "id": ada.id, "username": "ada", "name": "Ada Lovelace", "email": "ada@example.com",
        "email_notifications": "instant"}})


def test_without_a_token_both_are_401(anonymous, ada):
    for response in (anonymous.get(ME), anonymous.post(UPDATE, {"name": "Mallory"})):
        assert (response.status_code, response.json()["code"]) == (401, "unauthenticated")
    assert account_of(ada) == ("Ada Lovelace", "ada@example.com", "instant")


def test_name_and_notifications_change_without_a_password(client_for, ada):
    api = client_for(ada)
    response = api.post(UPDATE, {"name": "  Countess  ", "email_notifications": "digest"})
    assert (response.status_code, response.json()) == (200, shape(ada, name="Countess", email_notifications="digest"))
    assert account_of(ada) == ("Countess", "ada@example.com", "digest")
    assert api.get(ME).json() == response.json()


def test_what_is_not_sent_stays_and_unknown_fields_are_ignored(client_for, ada):
    api = client_for(ada)
    for body in ({}, {"username": "root", "is_staff": True}, {"email": "ada@example.com"}):
        assert (api.post(UPDATE, body).status_code, account_of(ada)) == (
            200, ("Ada Lovelace", "ada@example.com", "instant"))
    ada.refresh_from_db()
    assert (ada.username, ada.is_staff) == ("ada", False)


def test_an_empty_name_clears_it(client_for, ada):
    assert client_for(ada).post(UPDATE, {"name": ""}).json()["user"]["name"] == ""
    assert account_of(ada)[0] == ""


@pytest.mark.parametrize("setting", ["instant", "digest", "off"])
def test_each_notification_setting_is_kept(client_for, ada, setting):
    assert client_for(ada).post(UPDATE, {"email_notifications": setting}).status_code == 200
    assert account_of(ada)[2] == setting


def test_a_new_address_with_the_current_password(client_for, ada):
    response = client_for(ada).post(UPDATE, {"email": "ada@Analytical.Engine", "current_password": PASSWORD})
    assert (response.status_code, response.json()) == (200, shape(ada, email="ada@analytical.engine"))
    assert account_of(ada) == ("Ada Lovelace", "ada@analytical.engine", "instant")


@pytest.mark.parametrize(("password", "error"), [
    (None, "current_password is required to change email"),
    ("", "current_password is required to change email"),
    ("not my password", "current_password is wrong"),
])
def test_a_new_address_without_the_right_password_is_422_naming_it(client_for, ada, password, error):
    body = {"email": "mallory@example.com", "name": "Mallory"}
    if password is not None:
        body["current_password"] = password
    response = client_for(ada).post(UPDATE, body)
    assert (response.status_code, response.json()) == (422, {
        "error": error, "code": "validation_failed", "field": "current_password"})
    assert account_of(ada) == ("Ada Lovelace", "ada@example.com", "instant")  # nothing of it, the name neither


def test_wrong_passwords_lock_the_change_as_failed_logins_do(client_for, ada, settings):
    settings.LOGIN_FAILURE_LIMIT = 2
    api = client_for(ada)
    for _ in range(2):
        assert api.post(UPDATE, {"email": "m@example.com", "current_password": "guess"}).status_code == 422
    response = api.post(UPDATE, {"email": "m@example.com", "current_password": PASSWORD})
    assert (response.status_code, response.json()["field"]) == (422, "current_password")
    assert response.json()["error"].startswith("current_password: too many wrong attempts")
    assert account_of(ada)[1] == "ada@example.com"


@pytest.mark.parametrize(("body", "error"), [
    ({"email": "not an address"}, "email: Enter a valid email address."),
    ({"email": ""}, "email cannot be empty"),
    ({"email": None}, "email cannot be empty"),
    ({"email": 7}, "email: Enter a valid email address."),
    ({"email": "a" * 250 + "@b.cd"}, "email: Ensure this field has no more than 254 characters."),
    ({"name": "x" * 151}, "name: Ensure this field has no more than 150 characters."),
    ({"name": 5}, "name: Not a valid string."),
    ({"name": None}, "name cannot be empty"),
    ({"email_notifications": "weekly"}, 'email_notifications: "weekly" is not a valid choice.'),
    ({"email_notifications": None}, "email_notifications cannot be empty"),
    ({"email_notifications": "off", "current_password": 123}, "current_password: Not a valid string."),
])
def test_a_bad_value_is_422_naming_it_and_changes_nothing(client_for, ada, body, error):
    response = client_for(ada).post(UPDATE, {"current_password": PASSWORD, **body})
    assert (response.status_code, response.json()["error"], response.json()["code"]) == (
        422, error, "validation_failed")
    assert account_of(ada) == ("Ada Lovelace", "ada@example.com", "instant")


@pytest.mark.parametrize("body", [b"[]", b"{not json", b'"text"'])
def test_a_body_that_is_not_an_object_is_400(client_for, ada, body):
    response = client_for(ada).post(UPDATE, body, content_type="application/json")
    assert (response.status_code, response.json()["code"]) == (400, "bad_request")
    assert account_of(ada) == ("Ada Lovelace", "ada@example.com", "instant")


def test_one_changes_only_ones_own_account(client_for, ada):
    bob = UserFactory(username="bob", email="bob@example.com")
    client_for(ada).post(UPDATE, {"email_notifications": "off", "email": "x@example.com",
                                  "current_password": PASSWORD})
    assert account_of(bob)[1:] == ("bob@example.com", "instant")


def test_wrong_methods_are_405(client_for, ada):
    api = client_for(ada)
    assert api.post(ME, {}).status_code == 405
    assert api.get(UPDATE).status_code == 405
    assert User.objects.get(pk=ada.pk).email_notifications == EmailNotifications.INSTANT


def test_a_password_that_finds_no_turn_to_be_checked_is_503_and_changes_nothing(client_for, settings):
    settings.PASSWORD_HASHERS = ["tests.security.test_login_lockout.QuickBoundedHasher"]
    settings.PASSWORD_CHECKS_PER_PROCESS, settings.PASSWORD_CHECK_WAIT_SECONDS = 1, 0.2
    ada = UserFactory(username="ada", email="ada@example.com")  # hashed by the bounded hasher
    api = client_for(ada)
    with password_check_turn():  # the process's only turn, taken
        response = api.post(UPDATE, {"email": "new@example.com", "current_password": PASSWORD})
    assert (response.status_code, response.json()["code"], "Retry-After" in response) == (503, "unavailable", True)
    assert account_of(ada)[1] == "ada@example.com"
    assert api.post(UPDATE, {"email": "new@example.com", "current_password": PASSWORD}).status_code == 200
