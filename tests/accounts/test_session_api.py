"""A browser logged in to the pages calls the same API as every client: by its session, from this service's
own origin only, with the CSRF token on every write."""

import pytest
from django.test import Client

from projects.models import Project
from tests.factories import TicketFactory

BOARD = "/api/v1/projects/{id}/board"
PROJECTS = "/api/v1/projects"


@pytest.fixture
def browser(manager):
    """A logged-in browser whose requests are CSRF-checked, as a real one's are."""
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(manager)
    return browser


def csrf_token(browser) -> str:
    browser.get("/projects/")  # a page sets the CSRF cookie
    return browser.cookies["csrftoken"].value


def test_a_session_reads_the_api_like_a_token(browser, client_for, project, manager):
    TicketFactory(project=project)
    response = browser.get(BOARD.format(id=project.id))
    assert response.status_code == 200
    assert response.json() == client_for(manager).get(BOARD.format(id=project.id)).json()


def test_a_session_reaches_only_its_users_projects(browser, project):
    response = browser.get(BOARD.format(id=project.id + 1000))
    assert (response.status_code, response.json()) == (404, {"code": "not_found", "error": "project not found"})


def test_a_session_write_needs_the_csrf_token(browser):
    refused = browser.post(PROJECTS, {"name": "Gemini"}, content_type="application/json")
    assert (refused.status_code, refused.json()["error"].startswith("CSRF Failed")) == (403, True)
    assert not Project.objects.filter(name="Gemini").exists()

    accepted = browser.post(PROJECTS, {"name": "Gemini"}, content_type="application/json",
                            HTTP_X_CSRFTOKEN=csrf_token(browser))
    assert accepted.status_code == 201
    assert Project.objects.filter(name="Gemini").count() == 1


@pytest.mark.parametrize("headers", [
    {"HTTP_ORIGIN": "https://evil.example"},
    {"HTTP_ORIGIN": "http://evil.example"},
    {"HTTP_SEC_FETCH_SITE": "cross-site"},
    {"HTTP_SEC_FETCH_SITE": "same-site"},
], ids=["foreign origin", "foreign origin, plain http", "cross-site fetch", "sibling subdomain"])
def test_a_request_from_another_origin_never_authenticates_by_cookie(browser, project, headers):
    response = browser.get(BOARD.format(id=project.id), **headers)
    assert (response.status_code, response["WWW-Authenticate"]) == (401, "Bearer")
    write = browser.post(PROJECTS, {"name": "Gemini"}, content_type="application/json",
                         HTTP_X_CSRFTOKEN=csrf_token(browser), **headers)
    assert write.status_code == 401
    assert not Project.objects.filter(name="Gemini").exists()


def test_this_origin_and_trusted_origins_count(browser, project, settings):
    settings.CSRF_TRUSTED_ORIGINS = ["https://tracker.example"]
    for origin in ["http://testserver", "https://tracker.example"]:
        assert browser.get(BOARD.format(id=project.id), HTTP_ORIGIN=origin).status_code == 200


def test_a_bad_token_is_not_retried_as_the_session(browser, project):
    response = browser.get(BOARD.format(id=project.id), HTTP_AUTHORIZATION="Bearer " + "0" * 64)
    assert (response.status_code, response.json()) == (401, {
        "code": "unauthenticated", "error": "invalid, expired or revoked token"})


def test_after_logout_the_session_reads_nothing(browser, project):
    browser.logout()
    response = browser.get(BOARD.format(id=project.id))
    assert (response.status_code, response.json()) == (
        401, {"code": "unauthenticated", "error": "Authentication credentials were not provided."})


def test_a_session_is_rate_limited_as_its_user(browser, client_for, manager, project, settings):
    settings.API_RATE_LIMIT_PER_MINUTE, settings.API_USER_RATE_LIMIT_PER_MINUTE = 100, 3
    api = client_for(manager)
    assert [api.get(PROJECTS).status_code for _ in range(2)] == [200, 200]
    response = browser.get(PROJECTS)
    assert (response.status_code, response["X-RateLimit-Remaining"]) == (200, "0")
    limited = browser.get(PROJECTS)
    assert (limited.status_code, limited.json(), limited["X-RateLimit-Limit"]) == (
        429, {"code": "rate_limited", "error": "rate limit exceeded"}, "3")
