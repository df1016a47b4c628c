"""Filters by text, assignee and tag, and "My tickets": applied as typed or chosen, without a reload, to
the cards already there and to those that arrive."""

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from .conftest import open_board, shoot, still_same_document

pytestmark = pytest.mark.browser


def shown(browser) -> set[str]:
    return {element.text for element in browser.find_elements(By.CSS_SELECTOR, ".ticket-card:not([hidden]) .card-title")}


def control(browser, name: str):
    return browser.find_element(By.CSS_SELECTOR, f'[data-filter="{name}"]')


@pytest.fixture
def tickets(site, project):
    """Login page (tag ui, bob), Fuel check (ada), Wing docs (tag ui, nobody), Launch (ada and bob)."""
    ui = site.ok("ada", "POST", f"/api/v1/projects/{project.id}/tags", {"name": "ui"})["tag"]["id"]
    members = {member["name"]: member["id"] for member in site.board(project)["members"]}
    base = f"/api/v1/projects/{project.id}/tickets"
    for number, (title, tags, people) in enumerate([
        ("Login page", [ui], ["Bob Marley"]), ("Fuel check", [], ["Ada Lovelace"]), ("Wing docs", [ui], []),
        ("Launch", [], ["Ada Lovelace", "Bob Marley"]),
    ], start=1):
        site.add_ticket(project, title, tags=tags, status="todo" if number % 2 else "backlog")
        for person in people:
            site.ok("ada", "POST", f"{base}/{number}/assign", {"user_id": members[person]})
    return {"ui": ui}


def test_filters_apply_at_once_and_combine(site, project, tickets, open_browser):
    browser = open_browser()
    wait = open_board(browser, site, "ada", project)
    everything = {"Login page", "Fuel check", "Wing docs", "Launch"}
    assert shown(browser) == everything

    control(browser, "text").send_keys("LOG")
    wait.until(lambda _: shown(browser) == {"Login page"})
    assert browser.find_element(By.CSS_SELECTOR, "[data-filter-summary]").text == "1 of 4 tickets shown"
    assert browser.find_element(By.CSS_SELECTOR, '[data-status="todo"] .column-count').text == "1"
    shoot(browser, "filters-1-text")
    control(browser, "text").send_keys(Keys.CONTROL, "a", Keys.BACKSPACE)
    wait.until(lambda _: shown(browser) == everything)

    Select(control(browser, "assignee")).select_by_visible_text("Bob Marley")
    wait.until(lambda _: shown(browser) == {"Login page", "Launch"})
    Select(control(browser, "tag")).select_by_visible_text("ui")
    wait.until(lambda _: shown(browser) == {"Login page"})
    Select(control(browser, "assignee")).select_by_visible_text("Unassigned")
    wait.until(lambda _: shown(browser) == {"Wing docs"})

    control(browser, "clear").click()
    wait.until(lambda _: shown(browser) == everything)
    assert not control(browser, "clear").is_displayed()
    assert still_same_document(browser)


def test_my_tickets_in_one_click_and_new_cards_follow_the_filter(site, project, tickets, open_browser):
    browser = open_browser()
    wait = open_board(browser, site, "ada", project)

    control(browser, "mine").click()
    wait.until(lambda _: shown(browser) == {"Fuel check", "Launch"})
    assert control(browser, "mine").get_attribute("aria-pressed") == "true"
    shoot(browser, "filters-2-mine")

    site.add_ticket(project, "Not mine")
    mine = site.add_ticket(project, "Mine too")
    site.ok("bob", "POST", f"/api/v1/projects/{project.id}/tickets/{mine['project_ticket_number']}/assign",
            {"user_id": next(m["id"] for m in site.board(project)["members"] if m["name"] == "Ada Lovelace")})
    wait.until(lambda _: shown(browser) == {"Fuel check", "Launch", "Mine too"})
    assert len(browser.find_elements(By.CSS_SELECTOR, ".ticket-card")) == 6

    control(browser, "mine").click()
    wait.until(lambda _: len(shown(browser)) == 6)
    assert still_same_document(browser)
