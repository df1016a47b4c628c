"""A real browser logged in on the pages calls the API with its session: reads freely from the same origin,
writes only with the CSRF token."""

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

from tests.factories import PASSWORD

from .test_browser import browser, pytestmark, server  # noqa: F401  (fixtures and marks of the browser tests)

FETCH = """
const [path, method, csrf, done] = arguments;
const headers = {"Content-Type": "application/json"};
if (csrf) headers["X-CSRFToken"] = document.cookie.match(/csrftoken=([^;]+)/)[1];
fetch(path, {method, headers, body: method === "POST" ? JSON.stringify({name: "From the page"}) : undefined})
  .then(async (response) => done([response.status, await response.json()]));
"""


def fetch(driver, path: str, method: str = "GET", csrf: bool = False):
    return driver.execute_async_script(FETCH, path, method, csrf)


def test_the_page_calls_the_api_with_its_session(server, browser):  # noqa: F811
    server.manage("createuser", "ada", "--name", "Ada Lovelace", "--password", PASSWORD)
    browser.get(f"{server.url}/accounts/login/")
    browser.find_element(By.NAME, "username").send_keys("ada")
    browser.find_element(By.NAME, "password").send_keys(PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    WebDriverWait(browser, 10).until(expected_conditions.url_contains("/projects/"))
    browser.set_script_timeout(10)

    assert fetch(browser, "/api/v1/projects") == [200, {"projects": []}]
    status, body = fetch(browser, "/api/v1/projects", "POST")
    assert (status, body["error"].startswith("CSRF Failed")) == (403, True)
    status, body = fetch(browser, "/api/v1/projects", "POST", csrf=True)
    assert (status, body["project"]["name"]) == (201, "From the page")
    assert fetch(browser, "/api/v1/projects")[1]["projects"][0]["name"] == "From the page"
