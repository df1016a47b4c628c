"""The link notification e-mails carry, `/projects/<id>/board/?ticket=<number>`: the board opens that ticket's
panel once it is drawn; a number that is not on the board leaves the board as it is, with a word and no error."""

import pytest
from selenium.webdriver.common.by import By

from .conftest import open_board, shoot

pytestmark = pytest.mark.browser

NOT_HERE = "That ticket is not on this board any more (archived or deleted)."


def message(browser) -> str:
    toast = browser.find_element(By.CSS_SELECTOR, "[data-toast]")
    return toast.find_element(By.CSS_SELECTOR, "[data-toast-text]").text if toast.is_displayed() else ""


def panel_title(browser) -> str:
    panel = browser.find_element(By.CSS_SELECTOR, "[data-panel=ticket]")
    return panel.find_element(By.ID, "panel-title").text if panel.is_displayed() else ""


def test_the_number_in_the_link_opens_that_tickets_panel(site, project, open_browser):
    site.add_ticket(site.new_project(), "Elsewhere")  # global ids then differ from this project's numbers
    site.add_ticket(project, "Land softly")
    second = site.add_ticket(project, "Check fuel")
    assert second["id"] != second["project_ticket_number"] == 2
    browser = open_browser()
    wait = open_board(browser, site, "vic", project, query="?ticket=2")
    wait.until(lambda _: panel_title(browser) == "Check fuel")
    assert browser.current_url.endswith(f"{project.page}?ticket=2")
    shoot(browser, "ticket-link-open")

    browser.find_element(By.CSS_SELECTOR, "[data-panel-action=close]").click()
    assert browser.current_url.endswith(project.page)
    title = browser.find_element(By.CSS_SELECTOR, f'[data-ticket-id="{second["id"]}"] [data-field=title]')
    assert title.get_attribute("href").endswith(f"{project.page}?ticket=2")  # a card's link is the same form


@pytest.mark.parametrize("asked", ["99", "0", "x"])
def test_a_number_not_on_the_board_shows_the_board_as_it_is(site, project, open_browser, asked):
    ticket = site.add_ticket(project, "Land softly")
    browser = open_browser()
    wait = open_board(browser, site, "ada", project, query=f"?ticket={asked}")
    wait.until(lambda _: message(browser) == NOT_HERE)
    assert panel_title(browser) == ""
    assert browser.find_element(By.CSS_SELECTOR, f'[data-ticket-id="{ticket["id"]}"]').is_displayed()
    # open_browser checks when the test ends that the console reported no error


def test_an_archived_tickets_link_says_so(site, project, open_browser):
    site.add_ticket(project, "Land softly")
    site.ok("ada", "POST", f"/api/v1/projects/{project.id}/tickets/1/archive")
    browser = open_browser()
    wait = open_board(browser, site, "ada", project, query="?ticket=1")
    wait.until(lambda _: message(browser) == NOT_HERE)
    assert panel_title(browser) == ""
