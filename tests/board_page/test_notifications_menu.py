"""The notifications menu in the header: the latest, live, each leading to its ticket's panel, and "Mark all
read"."""

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions

from .conftest import open_board, shoot, sign_in, still_same_document

pytestmark = pytest.mark.browser

BADGE = (By.CSS_SELECTOR, "[data-unread-count]")


def items(browser) -> list[tuple[str, bool]]:
    return [(item.find_element(By.TAG_NAME, "span").text, "unread" in item.get_attribute("class"))
            for item in browser.find_elements(By.CSS_SELECTOR, "[data-menu=notifications] a.notification")]


def test_the_menu_lists_live_opens_the_ticket_and_marks_read(site, project, open_browser):
    dee = site.new_person(project, "editor")  # her notifications are hers alone
    first = site.add_ticket(project, "Land softly", by=dee)
    site.add_ticket(project, "Check fuel", by=dee)
    comments = f"/api/v1/projects/{project.id}/tickets/{{number}}/comments"
    site.ok("bob", "POST", comments.format(number=1), {"comment": "Wind from the west"})
    browser = open_browser()
    wait = open_board(browser, site, dee, project)
    wait.until(expected_conditions.text_to_be_present_in_element(BADGE, "1"))

    browser.find_element(By.CSS_SELECTOR, "[data-notification-badge]").click()
    wait.until(lambda _: len(items(browser)) == 1)
    assert browser.find_element(By.CSS_SELECTOR, "[data-notification-badge]").get_attribute("aria-expanded") == "true"
    site.ok("bob", "POST", comments.format(number=2), {"comment": "Fuel is low"})  # arrives while open
    wait.until(lambda _: len(items(browser)) == 2)
    assert [unread for _, unread in items(browser)] == [True, True]
    wait.until(expected_conditions.text_to_be_present_in_element(BADGE, "2"))
    shoot(browser, "notifications-1-menu")

    browser.find_elements(By.CSS_SELECTOR, "a.notification")[1].click()  # the older: the first ticket's
    panel = browser.find_element(By.CSS_SELECTOR, "[data-panel=ticket]")
    wait.until(lambda _: panel.find_element(By.ID, "panel-title").text == "Land softly")
    assert not browser.find_element(By.CSS_SELECTOR, "#notifications-panel").is_displayed()
    assert browser.current_url.endswith(f"?ticket={first['project_ticket_number']}")
    wait.until(expected_conditions.text_to_be_present_in_element(BADGE, "1"))
    assert still_same_document(browser)

    browser.find_element(By.CSS_SELECTOR, "[data-panel-action=close]").click()
    browser.find_element(By.CSS_SELECTOR, "[data-notification-badge]").click()
    browser.find_element(By.CSS_SELECTOR, "[data-notifications-action=mark-all-read]").click()
    wait.until(expected_conditions.text_to_be_present_in_element(BADGE, "0"))
    assert [unread for _, unread in items(browser)] == [False, False]
    assert site.ok(dee, "GET", "/api/v1/notifications/unread-count") == {"count": 0}


def test_from_another_page_a_notification_leads_to_its_ticket_on_its_board(site, project, open_browser):
    dee = site.new_person(project, "editor")
    ticket = site.add_ticket(project, "Land softly", by=dee)
    site.ok("bob", "POST", f"/api/v1/projects/{project.id}/tickets/1/comments", {"comment": "Hello"})
    browser = open_browser()
    wait = sign_in(browser, site, dee, "/projects/")
    wait.until(expected_conditions.text_to_be_present_in_element(BADGE, "1"))

    browser.find_element(By.CSS_SELECTOR, "[data-notification-badge]").click()
    wait.until(lambda _: len(items(browser)) == 1)
    browser.find_element(By.CSS_SELECTOR, "a.notification").click()

    wait.until(lambda _: browser.find_element(By.ID, "panel-title").text == "Land softly")
    assert browser.current_url.endswith(f"{project.page}?ticket={ticket['project_ticket_number']}")
    wait.until(lambda _: site.ok(dee, "GET", "/api/v1/notifications/unread-count") == {"count": 0})
