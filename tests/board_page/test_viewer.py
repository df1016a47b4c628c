"""A viewer's board: no editing control anywhere (no drag, no "Move to…", no add, a read-only panel), but
what the role table lets every member do: comment, track time."""

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from .conftest import card, drag, open_board, shoot, shown_order

pytestmark = pytest.mark.browser

EDITING = ("[data-action=add-ticket], [data-action=move], [data-panel-action=edit-title], "
           "[data-panel-action=edit-description], [data-panel-input], [data-panel-form=assign], "
           "[data-panel-form=tag], [data-panel-form=checklist], [data-dropzone], .chip-remove, "
           "[data-panel-list=checklist] input")


def visible(browser, css: str) -> list[str]:
    return [element.get_attribute("outerHTML")[:100] for element in browser.find_elements(By.CSS_SELECTOR, css)
            if element.is_displayed()]


def test_a_viewer_sees_no_editing_control_and_cannot_drag(site, project, open_browser):
    a, b = (site.add_ticket(project, title, checklist=["One"], priority="low")["id"] for title in ["Alpha", "Bravo"])
    browser = open_browser()
    wait = open_board(browser, site, "vic", project)

    assert visible(browser, EDITING) == []
    assert browser.find_element(By.CSS_SELECTOR, "[data-role]").text == "viewer"
    drag(browser, b, onto=a, half="upper")
    assert shown_order(browser)["backlog"] == [a, b]
    assert site.order(project)["backlog"] == [a, b]
    shoot(browser, "viewer-1-board")

    card(browser, a).find_element(By.CSS_SELECTOR, ".card-open").click()
    panel = browser.find_element(By.CSS_SELECTOR, "[data-panel=ticket]")
    wait.until(lambda _: panel.find_element(By.CSS_SELECTOR, "[data-panel-field=priority]").text == "Low")
    assert visible(browser, EDITING) == []
    assert panel.find_element(By.CSS_SELECTOR, "[data-panel-field=status]").text == "Backlog"
    assert panel.find_element(By.CSS_SELECTOR, "[data-panel-list=checklist]").text.split() == ["○", "One"]
    shoot(browser, "viewer-2-panel")

    # What every member may do, a viewer too.
    panel.find_element(By.CSS_SELECTOR, "[data-panel-form=comment] textarea").send_keys("Seen", Keys.CONTROL,
                                                                                        Keys.ENTER)
    wait.until(lambda _: [c["message"] for c in site.detail(project, 1)["comments"]] == ["Seen"])
