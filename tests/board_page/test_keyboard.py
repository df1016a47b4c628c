"""The keyboard: every control of the board and of the panel is reached with Tab and has a name, and the
"Move to…" dialog moves a card as precisely as a drag does."""

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from .conftest import open_board, shoot, shown_order

pytestmark = pytest.mark.browser

CONTROLS = "a[href], button, input, select, textarea"


def press_tab(browser) -> None:
    """Tab as the keyboard sends it, to whatever has focus (a file input's send_keys would take it as a path)."""
    ActionChains(browser).send_keys(Keys.TAB).perform()


def tab_until(browser, css: str, limit: int = 80):
    """Press Tab until the focused element matches `css`; that element."""
    for _ in range(limit):
        press_tab(browser)
        if browser.execute_script("return document.activeElement.matches(arguments[0])", css):
            return browser.switch_to.active_element
    raise AssertionError(f"{css} is not reached by Tab")


def reached_by_tab(browser, limit: int = 200) -> list:
    """Every element Tab stops on, from the top of the page, once round."""
    browser.execute_script("document.activeElement?.blur(); window.scrollTo(0, 0)")
    reached = []
    for _ in range(limit):
        press_tab(browser)
        element = browser.switch_to.active_element
        if element in reached:
            break
        reached.append(element)
    return reached


def unlabelled(browser, root_css: str) -> list[str]:
    """The visible controls under `root_css` whose computed accessible name is empty."""
    return [element.get_attribute("outerHTML")[:120] for element in
            browser.find_elements(By.CSS_SELECTOR, f"{root_css} :is({CONTROLS})")
            if element.is_displayed() and not element.accessible_name.strip()]


def test_the_move_dialog_puts_a_card_after_the_one_chosen(site, project, open_browser):
    a, b = (site.add_ticket(project, title)["id"] for title in ["Alpha", "Bravo"])
    d, e = (site.add_ticket(project, title, status="todo")["id"] for title in ["Delta", "Echo"])
    browser = open_browser()
    wait = open_board(browser, site, "bob", project)

    button = tab_until(browser, f'[data-ticket-id="{a}"] [data-action=move]')
    assert button.accessible_name == f"Move {project.prefix}-1 to…"
    button.send_keys(Keys.ENTER)
    column = browser.switch_to.active_element
    assert column.get_attribute("name") == "status"
    Select(column).select_by_visible_text("To do")
    Select(browser.find_element(By.NAME, "position")).select_by_visible_text(f"After {project.prefix}-3 Delta")
    shoot(browser, "keyboard-1-move-dialog")
    column.send_keys(Keys.TAB, Keys.TAB, Keys.ENTER)  # position, then Move

    expected = {"backlog": [b], "todo": [d, a, e], "in_progress": [], "review": [], "done": []}
    wait.until(lambda _: site.order(project) == expected)
    assert shown_order(browser) == expected
    # Focus stays on the moved card's control: the next move is one Enter away.
    assert browser.switch_to.active_element.accessible_name == f"Move {project.prefix}-1 to…"


def test_escape_closes_the_move_dialog_and_moves_nothing(site, project, open_browser):
    a, b = (site.add_ticket(project, title)["id"] for title in ["Alpha", "Bravo"])
    browser = open_browser()
    open_board(browser, site, "bob", project)

    tab_until(browser, f'[data-ticket-id="{b}"] [data-action=move]').send_keys(Keys.ENTER)
    Select(browser.switch_to.active_element).select_by_visible_text("Done")
    browser.switch_to.active_element.send_keys(Keys.ESCAPE)

    assert not browser.find_element(By.CSS_SELECTOR, "[data-move-dialog]").is_displayed()
    assert shown_order(browser)["backlog"] == [a, b]
    assert site.order(project)["backlog"] == [a, b]


def test_every_control_is_reached_by_tab_and_named(site, project, open_browser):
    ticket = site.add_ticket(project, "Alpha", description="Some *words*", checklist=["One"])
    browser = open_browser()
    wait = open_board(browser, site, "bob", project)

    reached = reached_by_tab(browser)
    board_controls = [element for element in browser.find_elements(By.CSS_SELECTOR, f"main :is({CONTROLS})")
                      if element.is_displayed()]
    assert [element for element in board_controls if element not in reached] == []
    assert unlabelled(browser, "body") == []

    browser.find_element(By.CSS_SELECTOR, f'[data-ticket-id="{ticket["id"]}"] .card-open').send_keys(Keys.ENTER)
    panel = browser.find_element(By.CSS_SELECTOR, "[data-panel=ticket]")
    wait.until(lambda _: panel.find_elements(By.CSS_SELECTOR, ".markdown em"))  # drawn
    assert browser.switch_to.active_element == panel
    panel_controls = [element for element in panel.find_elements(By.CSS_SELECTOR, CONTROLS)
                      if element.is_displayed() and element.is_enabled()]
    reached_in_panel = []
    for _ in range(len(panel_controls) + 5):
        press_tab(browser)
        reached_in_panel.append(browser.switch_to.active_element)
    assert [element for element in panel_controls if element not in reached_in_panel] == []
    assert unlabelled(browser, "[data-panel=ticket]") == []

    browser.switch_to.active_element.send_keys(Keys.ESCAPE)
    assert not panel.is_displayed()
    assert browser.switch_to.active_element.text == "Alpha"  # back on the card it opened from
