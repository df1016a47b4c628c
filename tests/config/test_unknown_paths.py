"""Every answer under /api/ is JSON, whatever the method, the token, or the layer that refuses it."""

import pytest

METHODS = ["get", "post", "put", "patch", "delete", "options", "head"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("authenticated", [True, False])
def test_unknown_api_path_is_json_404_for_every_method(client, client_for, manager, method, authenticated):
    api = client_for(manager) if authenticated else client
    body = {} if method in {"get", "head"} else {"data": "{}", "content_type": "application/json"}
    response = getattr(api, method)("/api/v1/no/such/path", **body)
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    if method != "head":
        assert response.json() == {"code": "not_found", "error": "not found"}


def test_a_form_post_with_a_session_cookie_is_not_refused_by_csrf(client, manager):
    client.force_login(manager)
    client.handler.enforce_csrf_checks = True
    response = client.post("/api/v1/no/such/path", {"a": "b"})
    assert (response.status_code, response.json()) == (404, {"code": "not_found", "error": "not found"})


@pytest.mark.parametrize("path", ["//api//v1//projects", "///api/v1/projects", "//api/nowhere"])
def test_doubled_slashes_before_api_still_answer_json(client, client_for, manager, path):
    for api in [client, client_for(manager)]:
        # As a server passes the path on: the test client would read a leading "//api" as a host name.
        response = api.get("/", PATH_INFO=path)
        assert (response.status_code, response["Content-Type"], response.json()) == (
            404, "application/json", {"code": "not_found", "error": "not found"})
        assert "X-RateLimit-Limit" in response


def test_site_pages_keep_their_html_404(client):
    response = client.get("/nowhere/api/")
    assert (response.status_code, response["Content-Type"]) == (404, "text/html; charset=utf-8")
