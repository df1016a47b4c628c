import re
from datetime import date, timedelta

import pytest
from django.test import Client

from accounts.models import ApiToken
from accounts.services import issue_token
from tests.factories import PASSWORD, UserFactory

PAGE = "/profile/api-access/"


@pytest.fixture
def user(db):
    return UserFactory(username="ada")


@pytest.fixture
def browser(client, user):
    client.force_login(user)
    return client


def issued_token(response) -> str:
    match = re.search(r'<code id="token-value">([0-9a-f]{64})</code>', response.content.decode())
    assert match, "the new token is shown"
    return match.group(1)


def test_anonymous_is_sent_to_login(client, db):
    response = client.get(PAGE)
    assert (response.status_code, response["Location"]) == (302, f"/accounts/login/?next={PAGE}")


def test_login_with_password_reaches_the_page(client, user):
    response = client.post("/accounts/login/", {"username": "ada", "password": PASSWORD, "next": PAGE})
    assert (response.status_code, response["Location"]) == (302, PAGE)
    assert client.get(PAGE).status_code == 200


def test_wrong_password_stays_on_login(client, user):
    response = client.post("/accounts/login/", {"username": "ada", "password": "nope"})
    assert response.status_code == 200
    assert "didn't match" in response.content.decode()


def test_generate_shows_the_token_once_and_it_works(browser, user, anonymous):
    response = browser.post(PAGE, {"label": "laptop"})
    assert response.status_code == 200
    plain = issued_token(response)
    token = ApiToken.objects.get(user=user)
    assert (token.label, token.prefix, token.expires_at) == ("laptop", plain[:8], None)
    assert anonymous.get("/api/v1/projects", HTTP_AUTHORIZATION=f"Bearer {plain}").status_code == 200

    listing = browser.get(PAGE).content.decode()
    assert plain not in listing
    assert "laptop" in listing and f"{plain[:8]}…" in listing


def test_generate_with_expiry(browser, user):
    expires = date.today() + timedelta(days=30)
    browser.post(PAGE, {"label": "short-lived", "expires_at": expires.isoformat()})
    assert ApiToken.objects.get(user=user).expires_at.date() == expires


def test_invalid_form_creates_nothing(browser, user):
    response = browser.post(PAGE, {"label": ""})
    assert response.status_code == 200
    assert b"This field is required" in response.content
    response = browser.post(PAGE, {"label": "old", "expires_at": "2000-01-01"})
    assert b"The expiry date is in the past." in response.content
    assert not ApiToken.objects.exists()


def test_revoke_own_token(browser, user, anonymous):
    token, plain = issue_token(user=user, label="old")
    response = browser.post(f"/profile/api-access/{token.id}/revoke")
    assert (response.status_code, response["Location"]) == (302, PAGE)
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert anonymous.get("/api/v1/projects", HTTP_AUTHORIZATION=f"Bearer {plain}").status_code == 401
    assert "revoked" in browser.get(PAGE).content.decode()


def test_cannot_revoke_someone_elses_token(browser):
    token, _ = issue_token(user=UserFactory())
    assert browser.post(f"/profile/api-access/{token.id}/revoke").status_code == 404
    token.refresh_from_db()
    assert token.revoked_at is None


def test_revoke_needs_post(browser, user):
    token, _ = issue_token(user=user)
    assert browser.get(f"/profile/api-access/{token.id}/revoke").status_code == 405


def test_forms_are_csrf_protected(user):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(user)
    token, _ = issue_token(user=user)
    assert browser.post(PAGE, {"label": "x"}).status_code == 403
    assert browser.post(f"/profile/api-access/{token.id}/revoke").status_code == 403
    assert ApiToken.objects.filter(user=user, revoked_at__isnull=True).count() == 1


def test_logout(browser):
    assert browser.post("/accounts/logout/").status_code == 302
    assert browser.get(PAGE).status_code == 302
