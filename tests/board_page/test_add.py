"""Adding a ticket at the foot of a column: type its title, press Enter."""

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from .conftest import open_board, shoot, shown_order, still_same_document

pytestmark = pytest.mark.browser


def test_a_title_and_enter_add_a_ticket_at_the_foot_of_the_column(site, project, open_browser):
    first = site.add_ticket(project, "Alpha", status="todo")["id"]
    browser = open_browser()
    wait = open_board(browser, site, "bob", project)
    field = browser.find_element(By.CSS_SELECTOR, '[data-status="todo"] [data-action="add-ticket"]')

    field.send_keys("Fix the login form", Keys.ENTER)

    wait.until(lambda _: len(shown_order(browser)["todo"]) == 2)
    added = shown_order(browser)["todo"][1]
    assert shown_order(browser)["todo"] == [first, added]
    assert site.order(project)["todo"] == [first, added]
    assert site.ticket(project, f"{project.prefix}-2")["title"] == "Fix the login form"
    card = browser.find_element(By.CSS_SELECTOR, f'[data-ticket-id="{added}"]')
    assert card.find_element(By.CSS_SELECTOR, '[data-field="title"]').text == "Fix the login form"
    # Ready for the next one: cleared, focused.
    assert (field.get_attribute("value"), browser.switch_to.active_element) == ("", field)
    assert still_same_document(browser)
    shoot(browser, "add-1-added")


def test_a_blank_title_adds_nothing(site, project, open_browser):
    browser = open_browser()
    open_board(browser, site, "bob", project)
    browser.find_element(By.CSS_SELECTOR, '[data-status="todo"] [data-action="add-ticket"]').send_keys("   ", Keys.ENTER)
    assert shown_order(browser)["todo"] == []
    assert site.order(project)["todo"] == []
