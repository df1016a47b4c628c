import psycopg
import pytest
from django.db import OperationalError
from psycopg_pool import PoolTimeout
from rest_framework.test import APIClient

from accounts.services import issue_token
from projects import selectors
from projects.models import Project


@pytest.fixture
def api(client_for, manager):
    return client_for(manager)


def test_unknown_api_path_is_json_404(api):
    response = api.get("/api/v1/nothing/here")
    assert (response.status_code, response.json()) == (404, {"code": "not_found", "error": "not found"})


def test_unknown_api_path_is_json_404_with_debug_on(api, settings):
    settings.DEBUG = True
    response = api.get("/api/v2/projects")
    assert (response.status_code, response.json()) == (404, {"code": "not_found", "error": "not found"})


def test_malformed_json_is_400_and_creates_nothing(api):
    response = api.post("/api/v1/projects", data='{"name": ', content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"].startswith("JSON parse error")
    assert Project.objects.count() == 1


@pytest.mark.parametrize("body", ['["name"]', '"Apollo"', "42", "null"])
def test_body_that_is_not_an_object_is_400(api, body):
    response = api.post("/api/v1/projects", data=body, content_type="application/json")
    assert (response.status_code, response.json()) == (400, {
        "code": "bad_request", "error": "JSON body must be an object"})


def test_wrong_method_is_405(api):
    response = api.delete("/api/v1/projects")
    assert (response.status_code, response.json()) == (405, {
        "code": "method_not_allowed", "error": 'Method "DELETE" not allowed.'})


def test_unsupported_media_type_is_json(api):
    response = api.post("/api/v1/projects", data="name=x", content_type="text/plain")
    assert response.status_code == 415
    assert response.json() == {
        "code": "unsupported_media_type", "error": 'Unsupported media type "text/plain" in request.'}


def unraised_api(user) -> APIClient:
    """A client that gets the server's answer to an exception rather than the exception."""
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {issue_token(user=user)[1]}")
    return client


def test_server_error_is_json(manager, monkeypatch):
    def explode(**kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(selectors, "memberships_of", explode)
    response = unraised_api(manager).get("/api/v1/projects")
    assert (response.status_code, response.json()) == (500, {"code": "server_error", "error": "internal server error"})


def database_error(cause: Exception):
    def fail(**kwargs):
        raise OperationalError(str(cause)) from cause  # how Django's DatabaseErrorWrapper re-raises it

    return fail


def test_no_database_connection_within_the_pool_timeout_is_json_503(manager, monkeypatch):
    monkeypatch.setattr(selectors, "memberships_of", database_error(PoolTimeout("couldn't get a connection after 10.00 sec")))
    response = unraised_api(manager).get("/api/v1/projects")
    assert (response.status_code, response.json()) == (503, {
        "code": "unavailable", "error": "the service is busy, try again shortly"})
    assert response["Retry-After"] == "1"


def test_other_database_errors_stay_500(manager, monkeypatch):
    monkeypatch.setattr(selectors, "memberships_of", database_error(psycopg.OperationalError("server closed the connection")))
    response = unraised_api(manager).get("/api/v1/projects")
    assert (response.status_code, response.json()) == (500, {"code": "server_error", "error": "internal server error"})


def test_pages_outside_the_api_keep_html_404(client, db):
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


def test_an_id_too_large_for_the_database_is_404_in_a_path(api, project):
    response = api.post(f"/api/v1/projects/{10**30}/tags/{10**30}/delete")
    assert (response.status_code, response.json()) == (404, {"code": "not_found", "error": "not found"})


def test_an_id_too_large_for_the_database_is_422_in_a_body(api, project):
    response = api.post(f"/api/v1/projects/{project.id}/tickets", {"title": "t", "tags": [2**70]})
    assert response.status_code == 422
    assert response.json()["error"] == "tags[0]: Ensure this value is less than or equal to 9223372036854775807."
