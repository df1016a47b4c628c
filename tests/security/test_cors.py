"""CORS for browser apps on other origins (django-cors-headers): the origins of CORS_ALLOWED_ORIGINS may call
the API with a bearer token; a preflight needs no token; no cookie counts cross-origin; other origins get no
CORS header at all."""

import subprocess
import sys

import pytest

from tests.realtime.servers import ROOT

APP = "https://board.example.com"
ALLOWED_HEADERS = "authorization, content-type, idempotency-key, if-match, if-none-match, x-request-id"
EXPOSED_HEADERS = ("ETag, Link, Retry-After, Idempotent-Replayed, X-Request-ID, X-RateLimit-Limit, "
                   "X-RateLimit-Remaining, X-RateLimit-Reset")
CORS_HEADERS = {"access-control-allow-origin", "access-control-allow-credentials", "access-control-allow-headers",
                "access-control-allow-methods", "access-control-expose-headers", "access-control-max-age"}


@pytest.fixture(autouse=True)
def allowed_origins(settings):
    settings.CORS_ALLOWED_ORIGINS = [APP, "http://localhost:5173"]


def cors_headers(response) -> dict[str, str]:
    return {name.lower(): value for name, value in response.headers.items() if name.lower() in CORS_HEADERS}


def preflight(client, path: str, origin: str, method: str = "POST"):
    return client.options(path, HTTP_ORIGIN=origin, HTTP_ACCESS_CONTROL_REQUEST_METHOD=method,
                          HTTP_ACCESS_CONTROL_REQUEST_HEADERS="authorization, content-type, idempotency-key")


class TestPreflight:
    def test_an_allowed_origin_is_answered_without_a_token(self, client, project):
        response = preflight(client, f"/api/v1/projects/{project.id}/tickets", APP)

        assert (response.status_code, response.content) == (200, b"")
        assert cors_headers(response) == {
            "access-control-allow-origin": APP, "access-control-allow-headers": ALLOWED_HEADERS,
            "access-control-allow-methods": "GET, POST", "access-control-expose-headers": EXPOSED_HEADERS,
            "access-control-max-age": "86400"}
        assert "X-RateLimit-Remaining" not in response  # not counted against the browser's address

    def test_an_app_may_send_its_own_request_id_and_read_the_one_answered(self, client, client_for, manager):
        allowed = client.options("/api/v1/projects", HTTP_ORIGIN=APP, HTTP_ACCESS_CONTROL_REQUEST_METHOD="GET",
                                 HTTP_ACCESS_CONTROL_REQUEST_HEADERS="authorization, x-request-id")
        response = client_for(manager).get("/api/v1/projects", HTTP_ORIGIN=APP, HTTP_X_REQUEST_ID="app-42")

        assert "x-request-id" in allowed["Access-Control-Allow-Headers"].split(", ")
        assert "X-Request-ID" in response["Access-Control-Expose-Headers"].split(", ")

    def test_another_origin_gets_no_cors_header(self, client, project):
        response = preflight(client, f"/api/v1/projects/{project.id}/tickets", "https://evil.example.com")

        assert response.status_code == 200
        assert cors_headers(response) == {}

    def test_an_origin_differing_only_by_scheme_or_port_is_another_origin(self, client, db):
        for origin in ["http://board.example.com", "https://board.example.com:8443", "http://localhost:5174"]:
            assert cors_headers(preflight(client, "/api/v1/projects", origin)) == {}


class TestAnswers:
    def test_an_allowed_origin_reads_the_answer_and_its_headers(self, client_for, manager, project):
        response = client_for(manager).get("/api/v1/projects", HTTP_ORIGIN=APP)

        assert response.status_code == 200
        assert cors_headers(response) == {"access-control-allow-origin": APP,
                                          "access-control-expose-headers": EXPOSED_HEADERS}
        assert "origin" in response["Vary"].lower()

    def test_refusals_carry_them_too(self, client_for, outsider, project, anonymous):
        hidden = client_for(outsider).get(f"/api/v1/projects/{project.id}/board", HTTP_ORIGIN=APP)
        unknown = anonymous.get("/api/v1/projects", HTTP_ORIGIN=APP)

        assert (hidden.status_code, hidden["Access-Control-Allow-Origin"]) == (404, APP)
        assert (unknown.status_code, unknown["Access-Control-Allow-Origin"]) == (401, APP)

    def test_over_the_rate_limit_the_app_can_read_when_to_retry(self, client_for, manager, settings):
        settings.API_RATE_LIMIT_PER_MINUTE = 1
        api = client_for(manager)
        api.get("/api/v1/projects", HTTP_ORIGIN=APP)
        limited = api.get("/api/v1/projects", HTTP_ORIGIN=APP)

        assert (limited.status_code, limited["Access-Control-Allow-Origin"]) == (429, APP)
        assert "Retry-After" in limited["Access-Control-Expose-Headers"]

    def test_another_origin_gets_no_cors_header(self, client_for, manager):
        response = client_for(manager).get("/api/v1/projects", HTTP_ORIGIN="https://evil.example.com")

        assert response.status_code == 200  # a token is no secret of the browser's: the browser hides the answer
        assert cors_headers(response) == {}

    def test_a_session_cookie_never_counts_from_another_origin(self, client, manager, project):
        client.force_login(manager)
        response = client.get("/api/v1/projects", HTTP_ORIGIN=APP)

        assert (response.status_code, response.json()) == (401, {"code": "unauthenticated",
            "error": "Authentication credentials were not provided."})
        assert cors_headers(response) == {"access-control-allow-origin": APP,
                                          "access-control-expose-headers": EXPOSED_HEADERS}

    def test_pages_outside_the_api_get_no_cors_header(self, client, db):
        response = client.get("/accounts/login/", HTTP_ORIGIN=APP)

        assert response.status_code == 200
        assert cors_headers(response) == {}

    def test_no_origin_is_allowed_by_default(self, client_for, manager, settings):
        settings.CORS_ALLOWED_ORIGINS = []
        response = client_for(manager).get("/api/v1/projects", HTTP_ORIGIN=APP)

        assert cors_headers(response) == {}


def test_the_origins_come_from_the_environment():
    program = "from django.conf import settings; print(settings.CORS_ALLOWED_ORIGINS)"
    result = subprocess.run([sys.executable, "manage.py", "shell", "-c", program], cwd=ROOT, check=True,
                            capture_output=True, text=True,
                            env={"CORS_ALLOWED_ORIGINS": f" {APP}, http://localhost:5173 ,", "PATH": ""})
    assert result.stdout.strip().splitlines()[-1] == f"['{APP}', 'http://localhost:5173']"
