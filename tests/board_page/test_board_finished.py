"""The board, finished: a drop lands where its placeholder showed (the upper half of a card puts it above, the
lower half below, whichever way the drag came), the panel opens below the header, the keyboard shortcuts, and the
"Skip to the board" link."""

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from .conftest import card, drag, shoot, shown_order, visit_board

pytestmark = pytest.mark.browser


def keys(browser, *pressed) -> None:
    ActionChains(browser).send_keys(*pressed).perform()


def focused_ticket(browser) -> int | None:
    return browser.execute_script(
        "return Number(document.activeElement.closest('[data-ticket-id]')?.dataset.ticketId) || null")


@pytest.mark.parametrize(("moving", "onto", "half", "expected"), [
    (0, 2, "upper", [1, 0, 2, 3]),  # down onto the upper half: above it
    (0, 2, "lower", [1, 2, 0, 3]),  # down onto the lower half: below it
    (3, 1, "lower", [0, 1, 3, 2]),  # up onto the lower half: below it
    (3, 1, "upper", [0, 3, 1, 2]),  # up onto the upper half: above it
])
def test_a_drop_lands_on_the_half_of_the_card_it_was_dropped_on(site, project, browser_for, moving, onto, half,
                                                                 expected):
    ids = [site.add_ticket(project, title)["id"] for title in ["Alpha", "Bravo", "Charlie", "Delta"]]
    browser = browser_for("bob")
    wait = visit_board(browser, site, project)
    drag(browser, ids[moving], onto=ids[onto], half=half)
    order = [ids[index] for index in expected]
    wait.until(lambda _: site.order(project)["backlog"] == order)
    assert shown_order(browser)["backlog"] == order


def test_a_drop_on_the_lower_half_of_a_card_of_another_column_lands_below_it(site, project, browser_for):
    a, b = (site.add_ticket(project, title)["id"] for title in ["Alpha", "Bravo"])
    c, d = (site.add_ticket(project, title, status="todo")["id"] for title in ["Charlie", "Delta"])
    browser = browser_for("bob")
    wait = visit_board(browser, site, project)
    drag(browser, a, onto=c, half="lower")
    wait.until(lambda _: site.order(project)["todo"] == [c, a, d])
    assert shown_order(browser)["todo"] == [c, a, d] and shown_order(browser)["backlog"] == [b]


@pytest.mark.parametrize("width", [1400, 390])
def test_the_panel_opens_below_the_header(site, project, browser_for, width):
    ticket = site.add_ticket(project, "Alpha")
    browser = browser_for("bob", width=width)
    wait = visit_board(browser, site, project)
    card(browser, ticket["id"]).find_element(By.CSS_SELECTOR, ".card-open").click()
    panel = browser.find_element(By.CSS_SELECTOR, "[data-panel=ticket]")
    wait.until(lambda _: panel.is_displayed())
    header = browser.find_element(By.CSS_SELECTOR, "[data-topbar]")
    wait.until(lambda _: panel.rect["y"] >= header.rect["y"] + header.rect["height"])
    assert panel.find_element(By.CSS_SELECTOR, "[data-panel-action=close]").is_displayed()
    shoot(browser, f"board-panel-below-header-{width}")


def test_the_keyboard_shortcuts(site, project, browser_for):
    a, b = (site.add_ticket(project, title)["id"] for title in ["Alpha", "Bravo"])
    c = site.add_ticket(project, "Charlie", status="todo")["id"]
    browser = browser_for("bob")
    wait = visit_board(browser, site, project)
    browser.find_element(By.TAG_NAME, "body").click()

    keys(browser, "j")
    assert focused_ticket(browser) == a
    keys(browser, "j", "j")
    assert focused_ticket(browser) == c  # across columns, in the order shown
    keys(browser, "k")
    assert focused_ticket(browser) == b

    keys(browser, Keys.ENTER)  # opens the card
    panel = browser.find_element(By.CSS_SELECTOR, "[data-panel=ticket]")
    wait.until(lambda _: panel.is_displayed() and panel.find_element(By.ID, "panel-title").text == "Bravo")
    keys(browser, Keys.ESCAPE)
    wait.until(lambda _: not panel.is_displayed())
    assert focused_ticket(browser) == b  # back on the card

    keys(browser, "m")  # "Move to…" of the focused card
    dialog = browser.find_element(By.CSS_SELECTOR, "[data-move-dialog]")
    wait.until(lambda _: dialog.is_displayed())
    assert dialog.find_element(By.CSS_SELECTOR, "[data-move-ref]").text == f"{project.prefix}-2"
    keys(browser, Keys.ESCAPE)
    wait.until(lambda _: not dialog.is_displayed())
    wait.until(lambda _: browser.switch_to.active_element.get_attribute("data-action") == "move")  # back on the card

    keys(browser, "c")  # adds to the focused card's column
    active = browser.switch_to.active_element
    assert active.get_attribute("data-action") == "add-ticket"
    assert active.find_element(By.XPATH, "ancestor::section").get_attribute("data-status") == "backlog"
    active.send_keys("Echo", Keys.ENTER)
    wait.until(lambda _: len(site.order(project)["backlog"]) == 3)

    browser.find_element(By.TAG_NAME, "body").click()
    keys(browser, "/")
    assert browser.switch_to.active_element.get_attribute("data-filter") == "text"
    keys(browser, "j")  # typed into the filter, not a shortcut
    assert browser.switch_to.active_element.get_attribute("value") == "j"
    keys(browser, Keys.ESCAPE)

    browser.find_element(By.TAG_NAME, "body").click()
    keys(browser, "?")
    shortcuts = browser.find_element(By.CSS_SELECTOR, "[data-keys-dialog]")
    wait.until(lambda _: shortcuts.is_displayed())
    assert "Next / previous card" in shortcuts.text
    shoot(browser, "board-keys")
    keys(browser, Keys.ESCAPE)
    wait.until(lambda _: not shortcuts.is_displayed())


def test_the_skip_link_is_the_first_tab_stop_and_leads_to_the_first_card(site, project, browser_for):
    first = site.add_ticket(project, "Alpha", status="todo")["id"]
    site.add_ticket(project, "Bravo", status="done")
    browser = browser_for("bob")
    visit_board(browser, site, project)
    browser.execute_script("document.activeElement?.blur(); window.scrollTo(0, 0)")

    keys(browser, Keys.TAB)
    skip = browser.switch_to.active_element
    assert (skip.text, skip.is_displayed()) == ("Skip to the board", True)
    keys(browser, Keys.ENTER)
    assert focused_ticket(browser) == first  # the second stop
    keys(browser, Keys.TAB)  # and the keyboard goes on from there, in the board
    assert browser.execute_script("return document.querySelector('[data-board]').contains(document.activeElement)")
