"""Repeated failed logins lock that username from that address out for a while."""

import pytest
from django.test import Client

from tests.factories import PASSWORD, UserFactory

LOGIN = "/accounts/login/"


@pytest.fixture
def user(db):
    return UserFactory(username="ada")


@pytest.fixture(autouse=True)
def small_limit(settings):
    settings.LOGIN_FAILURE_LIMIT = 3
    settings.LOGIN_LOCKOUT_SECONDS = 600


def fail(client: Client, times: int, username: str = "ada") -> None:
    for _ in range(times):
        response = client.post(LOGIN, {"username": username, "password": "wrong"})
        assert "didn't match" in response.content.decode()


def test_after_the_limit_even_the_right_password_is_refused(client, user):
    fail(client, 3)
    response = client.post(LOGIN, {"username": "ada", "password": PASSWORD})
    assert response.status_code == 200
    assert "Too many failed login attempts. This login is locked for 10 minutes" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_below_the_limit_the_right_password_logs_in_and_clears_the_count(client, user):
    fail(client, 2)
    assert client.post(LOGIN, {"username": "ada", "password": PASSWORD}).status_code == 302
    client.logout()
    fail(client, 2)  # counting starts again
    assert client.post(LOGIN, {"username": "ada", "password": PASSWORD}).status_code == 302


def test_the_lock_is_per_address_and_username(client, user):
    UserFactory(username="bob")
    fail(client, 3)
    elsewhere = Client(REMOTE_ADDR="10.0.0.9")
    assert elsewhere.post(LOGIN, {"username": "ada", "password": PASSWORD}).status_code == 302
    assert Client().post(LOGIN, {"username": "bob", "password": PASSWORD}).status_code == 302
    response = client.post(LOGIN, {"username": "ADA ", "password": PASSWORD})  # the same name, differently typed
    assert "Too many failed login attempts" in response.content.decode()


def test_the_lock_ends(client, user, settings):
    from django.core.cache import cache

    fail(client, 3)
    cache.clear()  # what the expiry of LOGIN_LOCKOUT_SECONDS does
    assert client.post(LOGIN, {"username": "ada", "password": PASSWORD}).status_code == 302


def test_the_admin_login_is_locked_out_too(client, db):
    UserFactory(username="root", is_staff=True, is_superuser=True)
    for _ in range(3):
        client.post("/admin/login/", {"username": "root", "password": "wrong"})
    response = client.post("/admin/login/", {"username": "root", "password": PASSWORD})
    assert response.status_code == 200
    assert "Too many failed login attempts" in response.content.decode()
