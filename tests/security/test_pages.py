"""Every HTML page carries the Content-Security-Policy; the page that shows a new token is never stored."""

import pytest

from core.csp import CSP_HEADER
from tests.factories import ProjectFactory

POLICY = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
          "font-src 'self' data:; connect-src 'self' ws://testserver wss://testserver; worker-src 'self' blob:; "
          "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'")


@pytest.fixture
def browser(client, manager):
    client.force_login(manager)
    return client


@pytest.mark.parametrize("path", [
    "/accounts/login/", "/projects/", "/profile/api-access/", "/admin/", "/admin/login/",
    "/api/v1/schema/swagger-ui/", "/api/v1/schema/redoc/", "/nowhere/",
])
def test_html_pages_carry_the_policy(client, db, path):
    response = client.get(path, follow=True)
    assert response["Content-Type"].startswith("text/html")
    assert response[CSP_HEADER] == POLICY


def test_board_page_carries_the_policy_and_no_inline_script(browser, project):
    response = browser.get(f"/projects/{project.id}/board/")
    assert (response.status_code, response[CSP_HEADER]) == (200, POLICY)
    html = response.content.decode()
    scripts = html.split("<script")[1:]
    assert scripts and all(' src="' in tag.split(">")[0] or 'type="application/json"' in tag.split(">")[0]
                           for tag in scripts)


def test_json_answers_carry_no_policy(browser, project):
    assert CSP_HEADER not in browser.get(f"/api/v1/projects/{project.id}/board")
    assert CSP_HEADER not in browser.get("/api/v1/projects")


def test_the_page_showing_a_new_token_is_not_stored(browser):
    response = browser.post("/profile/api-access/", {"label": "CI"})
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    assert "no-store" in browser.get("/profile/api-access/")["Cache-Control"]


def test_swagger_ui_and_redoc_pages_load_only_own_scripts(client, db):
    for path in ["/api/v1/schema/swagger-ui/", "/api/v1/schema/redoc/"]:
        html = client.get(path).content.decode()
        assert "<script>" not in html and "http://" not in html.split("<body")[1]


def test_other_projects_board_page_still_404(browser, db):
    assert browser.get(f"/projects/{ProjectFactory().id}/board/").status_code == 404
