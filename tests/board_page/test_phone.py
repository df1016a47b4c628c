"""At 390 px wide (a phone): the page never scrolls sideways, the columns do; the panel and the menus fit."""

import pytest
from selenium.webdriver.common.by import By

from .conftest import PHONE_WIDTH, card, open_board, shoot, sign_in

pytestmark = pytest.mark.browser


def page_overflow(browser) -> int:
    """How far the page reaches past the screen's right edge, in CSS pixels."""
    return browser.execute_script("return document.documentElement.scrollWidth - window.innerWidth")


def test_the_board_fits_a_phone_and_its_columns_scroll_sideways(site, project, open_browser):
    ticket = site.add_ticket(project, "A rather long title that has to wrap on a small screen", priority="urgent",
                             checklist=["One", "Two"], deadline="2031-01-01")
    site.add_ticket(project, "Second", status="done")
    browser = open_browser(width=PHONE_WIDTH)
    wait = open_board(browser, site, "bob", project)

    assert browser.execute_script("return window.innerWidth") == PHONE_WIDTH
    assert page_overflow(browser) == 0
    board = browser.find_element(By.CSS_SELECTOR, "[data-board]")
    assert board.get_property("scrollWidth") > board.get_property("clientWidth")  # the columns scroll
    shoot(browser, "phone-1-board")
    browser.execute_script("arguments[0].scrollLeft = arguments[0].scrollWidth", board)
    wait.until(lambda _: browser.find_element(By.CSS_SELECTOR, '[data-status="done"] .ticket-card').is_displayed())
    assert page_overflow(browser) == 0
    shoot(browser, "phone-2-board-scrolled")
    browser.execute_script("arguments[0].scrollLeft = 0", board)

    card(browser, ticket["id"]).find_element(By.CSS_SELECTOR, ".card-open").click()
    panel = browser.find_element(By.CSS_SELECTOR, "[data-panel=ticket]")
    wait.until(lambda _: panel.find_elements(By.CSS_SELECTOR, "[data-panel-list=checklist] input"))
    assert panel.rect["width"] == PHONE_WIDTH
    assert page_overflow(browser) == 0
    shoot(browser, "phone-3-panel")
    panel.find_element(By.CSS_SELECTOR, "[data-panel-action=close]").click()

    browser.find_element(By.CSS_SELECTOR, "[data-notification-badge]").click()
    menu = browser.find_element(By.CSS_SELECTOR, "#notifications-panel")
    wait.until(lambda _: menu.is_displayed())
    assert 0 <= menu.rect["x"] and menu.rect["x"] + menu.rect["width"] <= PHONE_WIDTH
    assert page_overflow(browser) == 0
    shoot(browser, "phone-4-notifications")


def test_the_project_list_fits_a_phone(site, project, open_browser):
    browser = open_browser(width=PHONE_WIDTH)
    wait = sign_in(browser, site, "ada", "/projects/")
    wait.until(lambda _: browser.find_elements(By.CSS_SELECTOR, ".project-item"))
    assert page_overflow(browser) == 0
    shoot(browser, "phone-5-projects")
