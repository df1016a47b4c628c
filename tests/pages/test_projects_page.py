"""The project list's "New project": the project is created through the API and its board opens."""

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.browser_site import WAIT_SECONDS, shoot

pytestmark = pytest.mark.browser


def test_a_new_project_is_created_and_its_board_opens(site, browser_for):
    username = site.new_person(site.new_project(), "viewer")  # anyone may create a project
    browser = browser_for(username)
    browser.get(f"{site.url}/projects/")
    form = browser.find_element(By.CSS_SELECTOR, "[data-action=new-project]")
    form.find_element(By.NAME, "name").send_keys("Mobile app")
    form.find_element(By.NAME, "prefix").send_keys("mob")
    shoot(browser, "projects-1-new")
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()

    wait = WebDriverWait(browser, WAIT_SECONDS, poll_frequency=0.05)
    wait.until(lambda _: browser.find_elements(By.CSS_SELECTOR, "[data-board][data-synced]"))
    mine = [p for p in site.ok(username, "GET", "/api/v1/projects")["projects"] if p["name"] == "Mobile app"]
    assert [(p["prefix"], p["role"]) for p in mine] == [("MOB", "manager")]
    assert browser.current_url == f"{site.url}/projects/{mine[0]['id']}/board/"
    assert browser.find_element(By.TAG_NAME, "h1").text == "Mobile app MOB"
    assert [c.get_attribute("data-status") for c in browser.find_elements(By.CSS_SELECTOR, "[data-status]")] == [
        "backlog", "todo", "in_progress", "review", "done"]
    assert browser.find_element(By.LINK_TEXT, "Settings").is_displayed()  # its creator manages it
