"""The ticket panel: a card's detail, its Markdown shown safely, every edit it offers going through the API,
and changes made elsewhere showing while it is open."""

import base64

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from tests.docs_area.test_browser import PAYLOAD

from .conftest import card, open_board, shoot, still_same_document

pytestmark = pytest.mark.browser

def panel_of(browser):
    return browser.find_element(By.CSS_SELECTOR, "[data-panel=ticket]")


def open_panel(browser, wait, ticket_id: int):
    card(browser, ticket_id).find_element(By.CSS_SELECTOR, ".card-open").click()
    panel = panel_of(browser)
    wait.until(lambda _: panel.find_elements(By.CSS_SELECTOR, "[data-panel-list=comments] li"))  # detail drawn
    return panel


def in_panel(panel, css: str):
    return panel.find_element(By.CSS_SELECTOR, css)


def test_the_panel_shows_the_ticket_and_its_markdown_and_runs_none_of_it(site, project, open_browser):
    ticket = site.add_ticket(project, "Land softly", description=PAYLOAD, priority="high", deadline="2031-05-06",
                             checklist=["Check fuel", "Check wings"])
    site.ok("vic", "POST", f"/api/v1/projects/{project.id}/tickets/1/comments", {"comment": "Looks good"})
    browser = open_browser()
    wait = open_board(browser, site, "ada", project)

    panel = open_panel(browser, wait, ticket["id"])
    wait.until(lambda _: panel.find_elements(By.CSS_SELECTOR, ".markdown table"))

    description = in_panel(panel, "[data-panel-field=description]")
    assert description.find_element(By.TAG_NAME, "strong").text == "bold"
    assert description.find_elements(By.CSS_SELECTOR, "script, svg, img, [onerror], [onload]") == []
    assert [link.get_attribute("href") for link in description.find_elements(By.TAG_NAME, "a")] == [
        "https://example.com/"]
    assert browser.execute_script("return window.pwned") is None
    assert in_panel(panel, "#panel-title").text == "Land softly"
    assert Select(in_panel(panel, "[data-panel-input=priority]")).first_selected_option.text == "High"
    assert in_panel(panel, "[data-panel-input=deadline]").get_attribute("value") == "2031-05-06"
    assert [item.text for item in panel.find_elements(By.CSS_SELECTOR, "[data-panel-list=checklist] li")] == [
        "Check fuel", "Check wings"]
    assert "Looks good" in in_panel(panel, "[data-panel-list=comments]").text
    assert browser.current_url.endswith(f"{project.page}?ticket={ticket['project_ticket_number']}")
    shoot(browser, "panel-1-open")

    in_panel(panel, "[data-panel-action=close]").click()
    assert not panel.is_displayed()
    assert browser.current_url.endswith(project.page)


def test_a_link_to_a_ticket_opens_its_panel(site, project, open_browser):
    ticket = site.add_ticket(project, "Land softly")
    browser = open_browser()
    wait = open_board(browser, site, "ada", project, query=f"?ticket={ticket['project_ticket_number']}")
    wait.until(lambda _: in_panel(panel_of(browser), "#panel-title").text == "Land softly")


def test_title_description_and_fields_are_edited_through_the_api(site, project, open_browser):
    ticket = site.add_ticket(project, "Land softly")
    tag = site.ok("ada", "POST", f"/api/v1/projects/{project.id}/tags", {"name": "flight", "color": "#22a06b"})["tag"]
    browser = open_browser()
    wait = open_board(browser, site, "bob", project)
    panel = open_panel(browser, wait, ticket["id"])

    in_panel(panel, "[data-panel-action=edit-title]").click()
    title = in_panel(panel, "[data-panel-form=title] input")
    title.clear()
    title.send_keys("Land very softly", Keys.ENTER)
    wait.until(lambda _: site.detail(project, 1)["title"] == "Land very softly")
    wait.until(lambda _: card(browser, ticket["id"]).find_element(By.CSS_SELECTOR, ".card-title").text
               == "Land very softly")

    in_panel(panel, "[data-panel-action=edit-description]").click()
    in_panel(panel, "[data-panel-form=description] textarea").send_keys("Mind the *wind*.")
    in_panel(panel, "[data-panel-form=description] button[type=submit]").click()
    wait.until(lambda _: panel.find_elements(By.CSS_SELECTOR, "[data-panel-field=description] em"))
    assert in_panel(panel, "[data-panel-field=description]").text == "Mind the wind."

    Select(in_panel(panel, "[data-panel-input=priority]")).select_by_visible_text("Urgent")
    wait.until(lambda _: site.detail(project, 1)["priority"] == "urgent")
    Select(in_panel(panel, "[data-panel-input=type]")).select_by_visible_text("Bug")
    wait.until(lambda _: site.detail(project, 1)["type"] == "bug")
    Select(in_panel(panel, "[data-panel-form=assign] select")).select_by_visible_text("Cy Twombly")
    in_panel(panel, "[data-panel-form=assign] button").click()
    wait.until(lambda _: [user["name"] for user in site.detail(project, 1)["assignees"]] == ["Cy Twombly"])
    Select(in_panel(panel, "[data-panel-form=tag] select")).select_by_visible_text("flight")
    in_panel(panel, "[data-panel-form=tag] button").click()
    wait.until(lambda _: site.detail(project, 1)["tags"] == [{"id": tag["id"], "name": "flight", "color": "#22a06b"}])
    Select(in_panel(panel, "[data-panel-input=status]")).select_by_visible_text("Review")
    wait.until(lambda _: site.detail(project, 1)["status"] == "review")
    wait.until(lambda _: card(browser, ticket["id"]).find_element(By.XPATH, "ancestor::section")
               .get_attribute("data-status") == "review")
    wait.until(lambda _: panel.find_elements(By.CSS_SELECTOR, "[data-panel-list=assignees] .chip-remove"))
    shoot(browser, "panel-2-edited")

    in_panel(panel, "[aria-label='Unassign Cy Twombly']").click()
    wait.until(lambda _: site.detail(project, 1)["assignees"] == [])
    assert still_same_document(browser)


def test_checklist_comments_and_timer(site, project, open_browser):
    ticket = site.add_ticket(project, "Land softly", checklist=["Check fuel"])
    browser = open_browser()
    wait = open_board(browser, site, "bob", project)
    panel = open_panel(browser, wait, ticket["id"])

    in_panel(panel, "[data-panel-list=checklist] input[type=checkbox]").click()
    wait.until(lambda _: site.detail(project, 1)["checklist"][0]["done"] == 1)
    in_panel(panel, "[data-panel-form=checklist] input").send_keys("Check wings", Keys.ENTER)
    wait.until(lambda _: [item["text"] for item in site.detail(project, 1)["checklist"]] == ["Check fuel",
                                                                                             "Check wings"])
    wait.until(lambda _: in_panel(panel, "[data-panel-field=checklist-progress]").text == "1/2")

    in_panel(panel, "[data-panel-form=comment] textarea").send_keys("Wind from the west", Keys.CONTROL, Keys.ENTER)
    wait.until(lambda _: [c["message"] for c in site.detail(project, 1)["comments"]] == ["Wind from the west"])
    wait.until(lambda _: "Wind from the west" in in_panel(panel, "[data-panel-list=comments]").text)

    timer = in_panel(panel, "[data-panel-action=timer]")
    timer.click()
    wait.until(lambda _: timer.text == "Stop timer" and timer.get_attribute("aria-pressed") == "true")
    status, running = site.call("bob", "GET", "/api/v1/time-entries/running")
    assert (status, running["entry"]["ticket_id"], running["entry"]["is_running"]) == (200, ticket["id"], 1)
    wait.until(lambda _: in_panel(panel, "[data-panel-field=timer]").text.startswith("Your timer: 0:00:0"))
    shoot(browser, "panel-3-timer-running")
    timer.click()
    wait.until(lambda _: timer.text == "Start timer")
    entries = site.ok("bob", "GET", f"/api/v1/tickets/{ticket['id']}/time-entries")
    assert ([entry["is_running"] for entry in entries["entries"]], entries["total_minutes"]) == ([0], 1)
    wait.until(lambda _: in_panel(panel, "[data-panel-field=time-total]").text == "1 min")


PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")


def test_files_dropped_on_the_panel_are_attached_and_download(site, project, open_browser, tmp_path):
    ticket = site.add_ticket(project, "Land softly")
    browser = open_browser()
    wait = open_board(browser, site, "bob", project)
    panel = open_panel(browser, wait, ticket["id"])

    # What the browser hands the page when files are dropped on it: a drop event with a DataTransfer.
    browser.execute_script("""
        const [zone, bytes] = arguments;
        const transfer = new DataTransfer();
        transfer.items.add(new File([Uint8Array.from(atob(bytes), (c) => c.charCodeAt(0))], "dot.png",
                                    { type: "image/png" }));
        transfer.items.add(new File(["a,b\\n1,2\\n"], "numbers.csv", { type: "text/csv" }));
        for (const kind of ["dragenter", "dragover", "drop"]) {
            zone.dispatchEvent(new DragEvent(kind, { dataTransfer: transfer, bubbles: true, cancelable: true }));
        }
    """, in_panel(panel, "[data-dropzone]"), base64.b64encode(PNG).decode())
    wait.until(lambda _: [a["original_name"] for a in site.detail(project, 1)["attachments"]] == ["dot.png",
                                                                                                  "numbers.csv"])
    wait.until(lambda _: len(panel.find_elements(By.CSS_SELECTOR, "[data-panel-list=attachments] a")) == 2)

    # The keyboard's way: the file input.
    text_file = tmp_path / "notes.txt"
    text_file.write_text("wind 10 kn")
    in_panel(panel, "[data-panel-input=files]").send_keys(str(text_file))
    wait.until(lambda _: len(panel.find_elements(By.CSS_SELECTOR, "[data-panel-list=attachments] a")) == 3)
    shoot(browser, "panel-4-attachments")

    link = in_panel(panel, "[data-panel-list=attachments] a")
    downloaded = browser.execute_script("""
        const response = await fetch(arguments[0]);
        return [response.status, btoa(String.fromCharCode(...new Uint8Array(await response.arrayBuffer())))];
    """, link.get_attribute("href"))
    assert (link.text, downloaded) == ("dot.png", [200, base64.b64encode(PNG).decode()])


def test_changes_made_elsewhere_show_while_the_panel_is_open(site, project, open_browser):
    ticket = site.add_ticket(project, "Land softly", checklist=["Check fuel"])
    browser = open_browser()
    wait = open_board(browser, site, "ada", project)
    panel = open_panel(browser, wait, ticket["id"])

    base = f"/api/v1/projects/{project.id}/tickets/1"
    site.ok("bob", "POST", f"{base}/update", {"title": "Land on the Moon", "description": "Bring **flags**"})
    site.ok("bob", "POST", f"{base}/comments", {"comment": "On my way"})
    site.ok("bob", "POST", f"/api/v1/checklist/{site.detail(project, 1)['checklist'][0]['id']}/toggle")
    site.ok("bob", "POST", f"/api/v1/tickets/{ticket['id']}/time-entries", {"minutes": 90})

    wait.until(lambda _: in_panel(panel, "#panel-title").text == "Land on the Moon")
    wait.until(lambda _: panel.find_elements(By.CSS_SELECTOR, "[data-panel-field=description] strong"))
    wait.until(lambda _: "On my way" in in_panel(panel, "[data-panel-list=comments]").text)
    wait.until(lambda _: in_panel(panel, "[data-panel-field=checklist-progress]").text == "1/1")
    wait.until(lambda _: in_panel(panel, "[data-panel-field=time-total]").text == "1 h 30 min")
    assert still_same_document(browser)
    shoot(browser, "panel-5-live")
