"""Drag and drop with real pointer events: a card lands exactly where it is dropped, between columns and
within one, and stays there after a reload; a move the API refuses puts the card back and says why."""

import pytest
from selenium.webdriver.common.by import By

from .conftest import (
    drag,
    drag_to_column,
    expect_refusal,
    open_board,
    shoot,
    shown_order,
    still_same_document,
    toast_text,
)

pytestmark = pytest.mark.browser

EMPTY = {"in_progress": [], "review": [], "done": []}


def test_a_card_dropped_between_two_cards_of_another_column_lands_between_them(site, project, open_browser):
    a, b, c = (site.add_ticket(project, title)["id"] for title in ["Alpha", "Bravo", "Charlie"])
    d, e = (site.add_ticket(project, title, status="todo")["id"] for title in ["Delta", "Echo"])
    browser = open_browser()
    wait = open_board(browser, site, "bob", project)
    shoot(browser, "drag-1-before")

    drag(browser, b, onto=e, half="upper")

    expected = {"backlog": [a, c], "todo": [d, b, e], **EMPTY}
    wait.until(lambda _: site.order(project) == expected)
    assert shown_order(browser) == expected
    shoot(browser, "drag-2-between-columns")
    assert still_same_document(browser)
    browser.refresh()
    wait.until(lambda _: browser.find_elements(By.CSS_SELECTOR, "[data-board][data-synced]"))
    assert shown_order(browser) == expected


def test_a_card_dragged_within_its_column_lands_where_dropped(site, project, open_browser):
    a, b, c, d = (site.add_ticket(project, title)["id"] for title in ["Alpha", "Bravo", "Charlie", "Delta"])
    browser = open_browser()
    wait = open_board(browser, site, "bob", project)

    drag(browser, d, onto=b, half="upper")
    expected = {"backlog": [a, d, b, c], "todo": [], **EMPTY}
    wait.until(lambda _: site.order(project) == expected)
    assert shown_order(browser) == expected

    drag(browser, a, onto=c, half="lower")
    expected = {"backlog": [d, b, c, a], "todo": [], **EMPTY}
    wait.until(lambda _: site.order(project) == expected)
    assert shown_order(browser) == expected


def test_a_card_dropped_on_an_empty_column_goes_there(site, project, open_browser):
    a, b = (site.add_ticket(project, title)["id"] for title in ["Alpha", "Bravo"])
    browser = open_browser()
    wait = open_board(browser, site, "bob", project)

    drag_to_column(browser, a, "review")

    expected = {"backlog": [b], "todo": [], "in_progress": [], "review": [a], "done": []}
    wait.until(lambda _: site.order(project) == expected)
    assert shown_order(browser) == expected


def test_a_contributor_reorders_a_column_and_cannot_take_a_card_out_of_it(site, project, open_browser):
    a, b, c = (site.add_ticket(project, title)["id"] for title in ["Alpha", "Bravo", "Charlie"])
    browser = open_browser()
    wait = open_board(browser, site, "cy", project)

    drag(browser, c, onto=a, half="upper")  # the contributor's way: tickets/sort
    expected = {"backlog": [c, a, b], "todo": [], **EMPTY}
    wait.until(lambda _: site.order(project) == expected)
    assert shown_order(browser) == expected

    drag_to_column(browser, b, "done")  # another column does not take it
    assert shown_order(browser) == expected
    assert site.order(project) == expected


def test_a_move_the_api_refuses_puts_the_card_back_and_says_why(site, project, open_browser):
    a, b, c = (site.add_ticket(project, title)["id"] for title in ["Alpha", "Bravo", "Charlie"])
    browser = open_browser()
    wait = open_board(browser, site, "bob", project)
    site.commands(["addmember", str(project.id), "bob", "viewer"])  # his page still shows an editor's board
    expect_refusal(browser, f"/api/v1/projects/{project.id}/tickets/2/move", 403)

    drag_to_column(browser, b, "done")

    wait.until(lambda _: "role" in toast_text(browser))
    assert toast_text(browser).startswith(f"{project.prefix}-2 was not moved. Your role in this project does not allow")
    original = {"backlog": [a, b, c], "todo": [], **EMPTY}
    assert shown_order(browser) == original
    assert site.order(project) == original
    # The page then reads the board again, with the role it now has: no more dragging.
    wait.until(lambda _: browser.find_element(By.CSS_SELECTOR, "[data-role]").text == "viewer")
    assert browser.find_elements(By.CSS_SELECTOR, "[data-action=move]") == []
    shoot(browser, "drag-3-refused")
