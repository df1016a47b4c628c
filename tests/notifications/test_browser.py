"""A real browser: the header badge counts up when a notification arrives, without a reload."""

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

from tests.factories import PASSWORD
from tests.realtime.test_browser import browser, pytestmark, server  # noqa: F401 (fixtures and marks)

BADGE = (By.CSS_SELECTOR, "[data-unread-count]")


def test_a_comment_on_my_ticket_counts_up_the_open_pages_badge(server, browser):  # noqa: F811
    server.manage("createuser", "ada", "--name", "Ada Lovelace", "--password", PASSWORD)
    server.manage("createuser", "bob", "--name", "Bob")
    ada_token, bob_token = server.manage("issuetoken", "ada"), server.manage("issuetoken", "bob")
    project = server.post("/api/v1/projects", {"name": "Apollo", "prefix": "APL"}, ada_token)["project"]
    server.manage("addmember", str(project["id"]), "bob", "viewer")
    ref = server.post(f"/api/v1/projects/{project['id']}/tickets", {"title": "Land softly"}, ada_token)["ticket_ref"]

    browser.get(f"{server.url}/accounts/login/?next=/projects/")
    browser.find_element(By.NAME, "username").send_keys("ada")
    browser.find_element(By.NAME, "password").send_keys(PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait = WebDriverWait(browser, 10, poll_frequency=0.05)
    wait.until(expected_conditions.text_to_be_present_in_element(BADGE, "0"))
    wait.until(expected_conditions.presence_of_element_located((By.CSS_SELECTOR, "[data-notification-badge][data-live]")))
    browser.execute_script("window.sameDocument = true")  # gone if the page reloads

    number = ref.split("-")[1]
    server.post(f"/api/v1/projects/{project['id']}/tickets/{number}/comments", {"comment": "Hello"}, bob_token)

    wait.until(expected_conditions.text_to_be_present_in_element(BADGE, "1"))
    assert "has-unread" in browser.find_element(By.CSS_SELECTOR, "[data-notification-badge]").get_attribute("class")
    assert browser.execute_script("return window.sameDocument") is True
