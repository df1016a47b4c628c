"""The panel's work on a ticket beyond its fields: blockers, time entries by hand, history, archive / unarchive,
delete (confirmed), the Markdown editor's preview and a save that meets a newer version (412). Each checked
through the API afterwards; a viewer sees none of the controls its role cannot use."""

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from .conftest import expect_refusal, shoot, visit_board
from .test_panel import open_panel

pytestmark = pytest.mark.browser


def shown(panel, css: str) -> bool:
    found = panel.find_elements(By.CSS_SELECTOR, css)
    return bool(found) and found[0].is_displayed()


def test_blockers_time_entries_and_history(site, project, browser_for):
    ticket = site.add_ticket(project, "Land softly")
    blocker = site.add_ticket(project, "Build the lander")
    browser = browser_for("bob")
    wait = visit_board(browser, site, project)
    panel = open_panel(browser, wait, ticket["id"])

    Select(panel.find_element(By.CSS_SELECTOR, "[data-panel-form=blocker] select")).select_by_visible_text(
        f"{project.prefix}-2 Build the lander")
    panel.find_element(By.CSS_SELECTOR, "[data-panel-form=blocker] button").click()
    wait.until(lambda _: [b["id"] for b in site.detail(project, 1)["blockers"]] == [blocker["id"]])
    wait.until(lambda _: "Build the lander" in panel.find_element(By.CSS_SELECTOR, "[data-panel-list=blockers]").text)

    panel.find_element(By.CSS_SELECTOR, "[data-panel-form=time-entry] [name=minutes]").send_keys("25")
    panel.find_element(By.CSS_SELECTOR, "[data-panel-form=time-entry] [name=note]").send_keys("checked the legs")
    panel.find_element(By.CSS_SELECTOR, "[data-panel-form=time-entry] button").click()
    entries = f"/api/v1/tickets/{ticket['id']}/time-entries"
    wait.until(lambda _: [(e["minutes"], e["note"]) for e in site.ok("bob", "GET", entries)["entries"]]
               == [(25, "checked the legs")])
    wait.until(lambda _: "25 min by Bob Marley" in panel.find_element(By.CSS_SELECTOR,
                                                                      "[data-panel-list=time-entries]").text)

    panel.find_element(By.CSS_SELECTOR, "[data-panel-history] summary").click()
    wait.until(lambda _: "added a blocker" in panel.find_element(By.CSS_SELECTOR, "[data-panel-list=history]").text)
    shoot(browser, "panel-6-work")

    panel.find_element(By.CSS_SELECTOR, f"[aria-label='Remove the blocker {project.prefix}-2']").click()
    wait.until(lambda _: site.detail(project, 1)["blockers"] == [])
    panel.find_element(By.CSS_SELECTOR, "[data-panel-list=time-entries] button").click()
    wait.until(lambda _: site.ok("bob", "GET", entries)["entries"] == [])
    wait.until(lambda _: "removed a blocker" in panel.find_element(By.CSS_SELECTOR, "[data-panel-list=history]").text)


def test_archive_unarchive_and_a_confirmed_delete(site, project, browser_for):
    ticket = site.add_ticket(project, "Land softly", by="bob")
    browser = browser_for("ada")
    wait = visit_board(browser, site, project)
    panel = open_panel(browser, wait, ticket["id"])

    panel.find_element(By.CSS_SELECTOR, "[data-panel-action=archive]").click()
    wait.until(lambda _: site.detail(project, 1)["archived_at"] is not None)
    wait.until(lambda _: not browser.find_elements(By.CSS_SELECTOR, f'[data-ticket-id="{ticket["id"]}"]'))
    wait.until(lambda _: shown(panel, "[data-panel-action=unarchive]") and shown(panel, "[data-panel-field=archived]"))
    panel.find_element(By.CSS_SELECTOR, "[data-panel-action=unarchive]").click()
    wait.until(lambda _: site.detail(project, 1)["archived_at"] is None)
    wait.until(lambda _: browser.find_elements(By.CSS_SELECTOR, f'[data-ticket-id="{ticket["id"]}"]'))

    panel.find_element(By.CSS_SELECTOR, "[data-panel-action=delete]").click()
    dialog = browser.find_element(By.CSS_SELECTOR, "[data-confirm-dialog]")
    wait.until(lambda _: dialog.is_displayed())
    shoot(browser, "panel-7-delete-confirm")
    dialog.find_element(By.CSS_SELECTOR, "button[value=no]").click()  # Cancel deletes nothing
    assert site.call("ada", "GET", f"/api/v1/projects/{project.id}/tickets/1")[0] == 200
    panel.find_element(By.CSS_SELECTOR, "[data-panel-action=delete]").click()
    wait.until(lambda _: dialog.is_displayed())
    dialog.find_element(By.CSS_SELECTOR, "[data-confirm-yes]").click()
    wait.until(lambda _: site.call("ada", "GET", f"/api/v1/projects/{project.id}/tickets/1")[0] == 404)
    wait.until(lambda _: not panel.is_displayed())
    assert not browser.find_elements(By.CSS_SELECTOR, f'[data-ticket-id="{ticket["id"]}"]')


def test_the_description_previews_and_a_newer_version_is_never_overwritten(site, project, browser_for):
    ticket = site.add_ticket(project, "Land softly", description="Old text")
    url = f"/api/v1/projects/{project.id}/tickets/1"
    browser = browser_for("bob")
    wait = visit_board(browser, site, project)
    panel = open_panel(browser, wait, ticket["id"])

    panel.find_element(By.CSS_SELECTOR, "[data-panel-action=edit-description]").click()
    editor = panel.find_element(By.CSS_SELECTOR, "[data-panel-form=description] [data-editor=markdown]")
    textarea = editor.find_element(By.TAG_NAME, "textarea")
    wait.until(lambda _: textarea.get_attribute("value") == "Old text")
    textarea.clear()
    textarea.send_keys("- [ ] wash\n- [x] dry")
    editor.find_element(By.CSS_SELECTOR, "[data-md-preview-toggle]").click()
    preview = editor.find_element(By.CSS_SELECTOR, "[data-md-preview]")
    wait.until(lambda _: len(preview.find_elements(By.CSS_SELECTOR, "input[type=checkbox][disabled]")) == 2)
    assert [box.is_selected() for box in preview.find_elements(By.TAG_NAME, "input")] == [False, True]
    shoot(browser, "panel-8-preview")
    editor.find_element(By.CSS_SELECTOR, "[data-md-preview-toggle]").click()  # back to the text

    site.ok("ada", "POST", f"{url}/update", {"description": "Ada's text"})  # meanwhile
    expect_refusal(browser, f"{url}/update", 412)
    panel.find_element(By.CSS_SELECTOR, "[data-panel-form=description] button[type=submit]").click()
    conflict = panel.find_element(By.CSS_SELECTOR, "[data-panel-conflict]")
    wait.until(lambda _: conflict.is_displayed() and "Ada's text" in conflict.text)
    assert "Ada Lovelace edited it." in conflict.text
    assert site.detail(project, 1)["description"] == "Ada's text"  # nothing overwritten
    assert textarea.get_attribute("value") == "- [ ] wash\n- [x] dry"  # nor lost
    shoot(browser, "panel-9-conflict")

    conflict.find_element(By.CSS_SELECTOR, "[data-panel-action=take-theirs]").click()
    assert textarea.get_attribute("value") == "Ada's text"
    textarea.send_keys(" and mine")
    site.ok("ada", "POST", f"{url}/comments", {"comment": "Not about the description"})  # no conflict
    panel.find_element(By.CSS_SELECTOR, "[data-panel-form=description] button[type=submit]").click()
    wait.until(lambda _: site.detail(project, 1)["description"] == "Ada's text and mine")
    wait.until(lambda _: panel.find_element(By.CSS_SELECTOR, "[data-panel-field=description]").text
               == "Ada's text and mine")


def test_task_lists_show_as_checkboxes_in_the_panel_and_comments_are_markdown(site, project, browser_for):
    ticket = site.add_ticket(project, "Land softly", description="- [x] fuel\n- [ ] wings")
    site.ok("cy", "POST", f"/api/v1/projects/{project.id}/tickets/1/comments", {"comment": "- [ ] **mind** <b>it</b>"})
    browser = browser_for("bob")
    wait = visit_board(browser, site, project)
    panel = open_panel(browser, wait, ticket["id"])
    wait.until(lambda _: len(panel.find_elements(
        By.CSS_SELECTOR, "[data-panel-field=description] input[type=checkbox]")) == 2)
    boxes = panel.find_elements(By.CSS_SELECTOR, "[data-panel-field=description] input[type=checkbox]")
    assert [(box.is_selected(), box.is_enabled()) for box in boxes] == [(True, False), (False, False)]
    comment = panel.find_element(By.CSS_SELECTOR, "[data-panel-list=comments] .comment-body")
    wait.until(lambda _: comment.find_elements(By.CSS_SELECTOR, "input[type=checkbox][disabled] + strong"))
    assert comment.text == "mind <b>it</b>"  # raw HTML stays text


def test_a_viewer_sees_no_work_controls_but_adds_time(site, project, browser_for):
    ticket = site.add_ticket(project, "Land softly")
    browser = browser_for("vic")
    wait = visit_board(browser, site, project)
    panel = open_panel(browser, wait, ticket["id"])
    for css in ["[data-panel-action=archive]", "[data-panel-action=unarchive]", "[data-panel-action=delete]",
                "[data-panel-form=blocker]"]:
        assert not shown(panel, css), css
    assert shown(panel, "[data-panel-form=time-entry]")  # every member tracks time
    base = f"/api/v1/projects/{project.id}/tickets/1"
    assert [site.call("vic", "POST", f"{base}/{action}")[0] for action in ("archive", "delete")] == [403, 403]
    assert site.call("vic", "POST", f"/api/v1/tickets/{ticket['id']}/blockers",
                     {"blocker_ticket_id": ticket["id"]})[0] == 403
    assert site.detail(project, 1)["archived_at"] is None
