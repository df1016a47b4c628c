"""Two people on one board: what one does in their browser, the other sees at once, in place."""

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from .conftest import drag, open_board, shoot, shown_order, still_same_document

pytestmark = pytest.mark.browser


def test_a_drag_in_one_browser_moves_the_card_in_the_other_to_the_same_place(site, project, open_browser):
    a, b = (site.add_ticket(project, title)["id"] for title in ["Alpha", "Bravo"])
    d, e = (site.add_ticket(project, title, status="todo")["id"] for title in ["Delta", "Echo"])
    mover, watcher = open_browser(), open_browser()
    open_board(mover, site, "bob", project)
    wait = open_board(watcher, site, "ada", project)

    drag(mover, a, onto=e, half="upper")

    expected = {"backlog": [b], "todo": [d, a, e], "in_progress": [], "review": [], "done": []}
    wait.until(lambda _: shown_order(watcher) == expected)
    assert shown_order(mover) == expected
    assert site.order(project) == expected
    assert still_same_document(watcher)
    shoot(watcher, "live-1-watcher")


def test_a_ticket_added_in_one_browser_appears_in_the_other(site, project, open_browser):
    adder, watcher = open_browser(), open_browser()
    open_board(adder, site, "bob", project)
    wait = open_board(watcher, site, "ada", project)

    adder.find_element(By.CSS_SELECTOR, '[data-status="review"] [data-action="add-ticket"]').send_keys(
        "Ship it", Keys.ENTER)

    wait.until(lambda _: len(shown_order(watcher)["review"]) == 1)
    [added] = shown_order(watcher)["review"]
    assert watcher.find_element(By.CSS_SELECTOR, f'[data-ticket-id="{added}"] .card-title').text == "Ship it"
