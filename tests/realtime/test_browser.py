"""A real browser on the live board: log in, open the board, move a ticket through the API, and
watch its card change column without a reload; all of it, and the API reference pages, under the
Content-Security-Policy, with nothing refused by it."""

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

from tests.browsers import CHROMEDRIVER, CHROMIUM, headless_chromium
from tests.factories import PASSWORD

from .servers import DaphneServer

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not (CHROMIUM.exists() and CHROMEDRIVER.exists()), reason="needs chromium and chromedriver"),
]


@pytest.fixture
def server(tmp_path):
    """A server of its own, black box: its own SQLite file, data made through commands and the API.
    DEBUG serves the static files without collectstatic and lets the session cookie travel over http;
    one process needs no Redis."""
    env = {"DATABASE_URL": f"sqlite:///{tmp_path / 'browser.sqlite3'}", "DJANGO_DEBUG": "1", "REDIS_URL": ""}
    with DaphneServer(env) as server:
        server.manage("migrate", "--no-input")
        yield server


@pytest.fixture
def browser():
    driver = headless_chromium()
    yield driver
    driver.quit()


# ReDoc's sidebar shows its vendor's logo from a CDN: blocked on purpose (no third-party requests), and
# the page works without it.
BLOCKED_ON_PURPOSE = ["https://cdn.redoc.ly/redoc/logo-mini.svg"]


def csp_violations(browser) -> list[str]:
    return [entry["message"] for entry in browser.get_log("browser") if "Content Security Policy" in entry["message"]
            and not any(url in entry["message"] for url in BLOCKED_ON_PURPOSE)]


def card_in(status: str, ref: str):
    return By.XPATH, f'//section[@data-status="{status}"]//article[.//*[@data-field="ref" and text()="{ref}"]]'


def test_a_move_through_the_api_moves_the_card_on_the_open_board(server, browser):
    server.manage("createuser", "ada", "--name", "Ada Lovelace", "--password", PASSWORD)
    token = server.manage("issuetoken", "ada")
    project = server.post("/api/v1/projects", {"name": "Apollo", "prefix": "APL"}, token)["project"]
    ref = server.post(f"/api/v1/projects/{project['id']}/tickets", {"title": "Land softly"}, token)["ticket_ref"]

    browser.get(f"{server.url}/accounts/login/?next=/projects/{project['id']}/board/")
    browser.find_element(By.NAME, "username").send_keys("ada")
    browser.find_element(By.NAME, "password").send_keys(PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait = WebDriverWait(browser, 10, poll_frequency=0.05)
    wait.until(expected_conditions.presence_of_element_located(card_in("backlog", ref)))
    wait.until(expected_conditions.text_to_be_present_in_element((By.CSS_SELECTOR, "[data-live-status]"), "Live"))

    browser.execute_script("window.sameDocument = true")  # gone if the page reloads

    number = ref.split("-")[1]
    server.post(f"/api/v1/projects/{project['id']}/tickets/{number}/move", {"status": "done"}, token)

    wait.until(expected_conditions.presence_of_element_located(card_in("done", ref)))
    assert browser.find_elements(*card_in("backlog", ref)) == []
    assert browser.execute_script("return window.sameDocument") is True
    assert csp_violations(browser) == []


@pytest.mark.parametrize(("path", "rendered"), [
    ("/api/v1/schema/swagger-ui/", ".swagger-ui .opblock"),
    ("/api/v1/schema/redoc/", "redoc [role=menuitem], redoc .menu-content"),
])
def test_api_reference_renders_under_the_policy(server, browser, path, rendered):
    browser.get(f"{server.url}{path}")
    WebDriverWait(browser, 20, poll_frequency=0.1).until(
        expected_conditions.presence_of_element_located((By.CSS_SELECTOR, rendered)))
    assert csp_violations(browser) == []
