"""The settings page of a project, for its managers: general settings, statuses (drag, arrows, hide, delete an
empty one), tags, members and webhooks, each change checked through the API afterwards; other members get a 403
page and the API refuses them too."""

import re

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from tests.browser_site import PHONE_WIDTH, WAIT_SECONDS, expect_refusal, shoot, shoot_whole
from tests.transfers.conftest import SAMPLES
from tests.webhooks.receivers import Receiver

pytestmark = pytest.mark.browser


def open_settings(browser, site, project) -> WebDriverWait:
    browser.get(f"{site.url}/projects/{project.id}/settings/")
    wait = WebDriverWait(browser, WAIT_SECONDS, poll_frequency=0.05)
    wait.until(lambda _: browser.find_elements(By.CSS_SELECTOR, "body[data-settings-loaded]"))
    return wait


def section(browser, name: str):
    return browser.find_element(By.CSS_SELECTOR, f'[data-settings="{name}"]')


def status_line(browser, name: str) -> str:
    return section(browser, name).find_element(By.CSS_SELECTOR, "[data-section-status]").text


def confirm(browser, wait) -> None:
    dialog = browser.find_element(By.CSS_SELECTOR, "[data-confirm-dialog]")
    wait.until(lambda _: dialog.is_displayed())
    dialog.find_element(By.CSS_SELECTOR, "[data-confirm-yes]").click()


def set_value(browser, element, value: str) -> None:
    """What a colour picker does when a colour is chosen: the value, then a change event."""
    browser.execute_script("arguments[0].value = arguments[1];"
                           "arguments[0].dispatchEvent(new Event('change', {bubbles: true}))", element, value)


def retype(element, text: str) -> None:
    element.send_keys(Keys.CONTROL, "a")
    element.send_keys(text, Keys.TAB)  # leaving the field sends its change


def statuses(site, project) -> list[tuple]:
    return [(s["slug"], s["label"], s["color"], s["hidden"])
            for s in site.ok("ada", "GET", f"/api/v1/projects/{project.id}/statuses")["statuses"]]


def test_general_settings(site, project, browser_for):
    browser = browser_for("ada")
    wait = open_settings(browser, site, project)
    form = section(browser, "general")
    retype(form.find_element(By.NAME, "name"), "Apollo 11")
    retype(form.find_element(By.NAME, "prefix"), "moon")
    form.find_element(By.NAME, "description").send_keys("To the Moon")
    form.find_element(By.NAME, "docs_enabled").click()
    Select(form.find_element(By.NAME, "estimation_mode")).select_by_visible_text("Hours")
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()

    wait.until(lambda _: status_line(browser, "general") == "Saved.")
    assert site.ok("ada", "GET", f"/api/v1/projects/{project.id}")["project"] == {
        "id": project.id, "name": "Apollo 11", "prefix": "MOON", "description": "To the Moon", "role": "manager",
        "docs_enabled": False, "estimation_mode": "hours"}
    assert form.find_element(By.NAME, "prefix").get_attribute("value") == "MOON"
    assert browser.find_element(By.CSS_SELECTOR, "[data-project-prefix]").text == "MOON"


def test_statuses_added_changed_reordered_and_deleted(site, project, browser_for):
    site.add_ticket(project, "Keeps backlog", status="backlog")
    browser = browser_for("ada")
    wait = open_settings(browser, site, project)
    rows = section(browser, "statuses")
    row = lambda slug: rows.find_element(By.CSS_SELECTOR, f'[data-status-slug="{slug}"]')  # noqa: E731

    add = rows.find_element(By.CSS_SELECTOR, "[data-form=add-status]")
    add.find_element(By.NAME, "label").send_keys("QA", Keys.ENTER)
    wait.until(lambda _: [s[0] for s in statuses(site, project)][-1] == "qa")
    wait.until(lambda _: rows.find_elements(By.CSS_SELECTOR, '[data-status-slug="qa"]'))

    retype(row("todo").find_element(By.CSS_SELECTOR, "[data-field=label]"), "Next up")
    wait.until(lambda _: statuses(site, project)[1] == ("todo", "Next up", "#0d6efd", False))
    set_value(browser, row("todo").find_element(By.CSS_SELECTOR, "[data-field=color]"), "#123456")
    wait.until(lambda _: statuses(site, project)[1] == ("todo", "Next up", "#123456", False))
    row("review").find_element(By.CSS_SELECTOR, "[data-field=hidden]").click()
    wait.until(lambda _: statuses(site, project)[3] == ("review", "Review", "#6f42c1", True))

    handle, target = (row(slug).find_element(By.CSS_SELECTOR, ".drag-handle") for slug in ("done", "backlog"))
    ActionChains(browser, duration=40).click_and_hold(handle).move_by_offset(0, -8) \
        .move_to_element_with_offset(target, 0, -target.size["height"] // 4).pause(0.1).release().perform()
    order = ["done", "backlog", "todo", "in_progress", "review", "qa"]
    wait.until(lambda _: [s[0] for s in statuses(site, project)] == order)
    row("qa").find_element(By.CSS_SELECTOR, "[data-action=up]").click()
    order = ["done", "backlog", "todo", "in_progress", "qa", "review"]
    wait.until(lambda _: [s[0] for s in statuses(site, project)] == order)
    assert browser.switch_to.active_element.get_attribute("aria-label") == "Move QA up"  # the arrow keeps focus
    shoot(browser, "settings-1-statuses")

    row("qa").find_element(By.CSS_SELECTOR, "[data-action=delete]").click()
    confirm(browser, wait)
    wait.until(lambda _: "qa" not in [s[0] for s in statuses(site, project)])
    wait.until(lambda _: not rows.find_elements(By.CSS_SELECTOR, '[data-status-slug="qa"]'))

    expect_refusal(browser, f"/api/v1/projects/{project.id}/statuses/backlog/delete", 422)
    row("backlog").find_element(By.CSS_SELECTOR, "[data-action=delete]").click()
    confirm(browser, wait)
    wait.until(lambda _: "the column still holds 1 ticket" in status_line(browser, "statuses"))
    assert "backlog" in [s[0] for s in statuses(site, project)]

    # The board shows the columns as they now are: in order, the hidden one left out.
    browser.get(f"{site.url}{project.page}")
    wait.until(lambda _: browser.find_elements(By.CSS_SELECTOR, "[data-board][data-synced]"))
    assert [c.get_attribute("data-status") for c in browser.find_elements(By.CSS_SELECTOR, "[data-status]")] == [
        "done", "backlog", "todo", "in_progress"]


def test_tags_added_renamed_recoloured_and_deleted(site, project, browser_for):
    browser = browser_for("ada")
    wait = open_settings(browser, site, project)
    tags_url = f"/api/v1/projects/{project.id}/tags"
    tags = section(browser, "tags")
    tags.find_element(By.CSS_SELECTOR, "[data-form=add-tag] [name=name]").send_keys("flight", Keys.ENTER)
    wait.until(lambda _: [t["name"] for t in site.ok("ada", "GET", tags_url)["tags"]] == ["flight"])
    row = wait.until(lambda _: tags.find_element(By.CSS_SELECTOR, "[data-tag-id]"))
    retype(row.find_element(By.CSS_SELECTOR, "[data-field=name]"), "Flight ops")
    set_value(browser, row.find_element(By.CSS_SELECTOR, "[data-field=color]"), "#22a06b")
    wait.until(lambda _: [(t["name"], t["color"]) for t in site.ok("ada", "GET", tags_url)["tags"]]
               == [("Flight ops", "#22a06b")])
    row.find_element(By.CSS_SELECTOR, "[data-action=delete]").click()
    confirm(browser, wait)
    wait.until(lambda _: site.ok("ada", "GET", tags_url)["tags"] == [])


def test_members_roles_and_removal(site, project, browser_for):
    browser = browser_for("ada")
    wait = open_settings(browser, site, project)
    members = section(browser, "members")
    by_name = {row.find_element(By.CSS_SELECTOR, "[data-field=name]").text: row
               for row in members.find_elements(By.CSS_SELECTOR, "[data-member-id]")}
    assert set(by_name) == {"Ada Lovelace (you)", "Bob Marley", "Cy Twombly", "Vic Viewer"}
    assert [name for name, row in by_name.items()
            if row.find_element(By.CSS_SELECTOR, "[data-field=owner]").is_displayed()] == ["Ada Lovelace (you)"]
    owner = by_name["Ada Lovelace (you)"]
    assert not owner.find_element(By.CSS_SELECTOR, "[data-field=role]").is_enabled()
    assert owner.find_elements(By.CSS_SELECTOR, "[data-action=remove]") == []

    Select(by_name["Cy Twombly"].find_element(By.CSS_SELECTOR, "[data-field=role]")).select_by_visible_text("Editor")
    listed = lambda: {m["name"]: m["role"] for m in site.ok("ada", "GET", f"/api/v1/projects/{project.id}/members")[  # noqa: E731
        "members"]}
    wait.until(lambda _: listed()["Cy Twombly"] == "editor")
    by_name["Vic Viewer"].find_element(By.CSS_SELECTOR, "[data-action=remove]").click()
    confirm(browser, wait)
    wait.until(lambda _: "Vic Viewer" not in listed())
    assert site.call("vic", "GET", f"/api/v1/projects/{project.id}")[0] == 404
    wait.until(lambda _: status_line(browser, "members") == "Vic Viewer removed.")
    shoot(browser, "settings-2-members")


def test_webhooks_added_with_a_secret_shown_once_then_switched_tested_redelivered_rotated(site, project,
                                                                                          browser_for):
    browser = browser_for("ada")
    wait = open_settings(browser, site, project)
    hooks = section(browser, "webhooks")
    api_hooks = lambda: site.ok("ada", "GET", f"/api/v1/projects/{project.id}/webhooks")["webhooks"]  # noqa: E731
    with Receiver() as receiver:
        form = hooks.find_element(By.CSS_SELECTOR, "[data-form=add-webhook]")
        form.find_element(By.NAME, "url").send_keys(receiver.url)
        form.find_element(By.NAME, "description").send_keys("Chat")
        form.find_element(By.CSS_SELECTOR, "[data-all-events]").click()
        form.find_element(By.CSS_SELECTOR, "[value='ticket.created']").click()
        form.find_element(By.CSS_SELECTOR, "[value='comment.created']").click()
        form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()

        secret_box = hooks.find_element(By.CSS_SELECTOR, "[data-webhook-secret]")
        wait.until(lambda _: secret_box.is_displayed())
        secret = secret_box.find_element(By.CSS_SELECTOR, "[data-secret-value]").text
        assert re.fullmatch(r"whsec_[A-Za-z0-9+/=]{44}", secret)
        [hook] = api_hooks()
        assert (hook["url"], hook["events"], hook["description"], hook["active"]) == (
            receiver.url, ["ticket.created", "comment.created"], "Chat", True)

        site.add_ticket(project, "Ping me")  # a ticket.created: delivered, signed with the secret shown
        [received] = receiver.wait_for(1)
        assert received.verified(secret)["event"] == "ticket.created"
        row = hooks.find_element(By.CSS_SELECTOR, "[data-webhook-id]")
        row.find_element(By.CSS_SELECTOR, "[data-action=deliveries]").click()
        wait.until(lambda _: row.find_elements(By.CSS_SELECTOR, "[data-delivery-status=delivered]"))
        row.find_element(By.CSS_SELECTOR, "[data-redeliver]").click()
        receiver.wait_for(2)
        assert receiver.received[1].message_id == received.message_id  # the same message again
        row.find_element(By.CSS_SELECTOR, "[data-action=ping]").click()
        assert receiver.wait_for(3)[2].frame()["event"] == "webhook.ping"
        wait.until(lambda _: len(row.find_elements(By.CSS_SELECTOR, "[data-redeliver]")) == 3)
        shoot(browser, "settings-3-webhooks")

    row.find_element(By.CSS_SELECTOR, "[data-field=active]").click()
    wait.until(lambda _: api_hooks()[0]["active"] is False)
    row.find_element(By.CSS_SELECTOR, "[data-action=rotate]").click()
    confirm(browser, wait)
    wait.until(lambda _: secret_box.find_element(By.CSS_SELECTOR, "[data-secret-value]").text not in ("", secret))
    browser.refresh()  # shown once: not after a reload
    wait.until(lambda _: browser.find_elements(By.CSS_SELECTOR, "body[data-settings-loaded]"))
    assert not browser.find_element(By.CSS_SELECTOR, "[data-webhook-secret]").is_displayed()
    assert secret not in browser.page_source
    section(browser, "webhooks").find_element(By.CSS_SELECTOR, "[data-webhook-id] [data-action=delete]").click()
    confirm(browser, wait)
    wait.until(lambda _: api_hooks() == [])


@pytest.mark.parametrize("username", ["bob", "cy", "vic"])
def test_other_members_get_a_403_page_and_see_no_settings_link(site, project, browser_for, username):
    browser = browser_for(username)
    expect_refusal(browser, f"/projects/{project.id}/settings/", 403)
    browser.get(f"{site.url}/projects/{project.id}/settings/")
    assert browser.find_element(By.TAG_NAME, "h1").text == "Not allowed"
    assert browser.find_elements(By.CSS_SELECTOR, "[data-settings]") == []
    browser.get(f"{site.url}{project.page}")
    WebDriverWait(browser, WAIT_SECONDS).until(lambda _: browser.find_elements(By.CSS_SELECTOR, "[data-synced]"))
    assert browser.find_elements(By.LINK_TEXT, "Settings") == []
    base = f"/api/v1/projects/{project.id}"
    members = {m["name"]: m["id"] for m in site.ok("ada", "GET", f"{base}/members")["members"]}
    assert [site.call(username, "POST", path, body)[0] for path, body in [
        (f"{base}/update", {"name": "Mine"}), (f"{base}/statuses", {"label": "Mine"}),
        (f"{base}/statuses/todo/delete", None), (f"{base}/members/{members['Vic Viewer']}/delete", None),
        (f"{base}/webhooks", {"url": "http://127.0.0.1:9/x"})]] == [403] * 5
    assert site.ok("ada", "GET", base)["project"]["name"] == "Apollo"
    assert len(site.ok("ada", "GET", f"{base}/members")["members"]) == 4


def test_a_non_member_gets_404(site, project, browser_for):
    username = site.new_person(site.new_project(), "manager")  # a manager, of another project
    browser = browser_for(username)
    expect_refusal(browser, f"/projects/{project.id}/settings/", 404)
    expect_refusal(browser, "/favicon.ico", 404)  # the server runs with DEBUG: Django's own 404 page, no icon
    browser.get(f"{site.url}/projects/{project.id}/settings/")
    assert "Not allowed" not in browser.page_source and browser.find_elements(By.CSS_SELECTOR, "[data-settings]") == []


def test_the_page_fits_a_phone(site, project, browser_for):
    site.ok("ada", "POST", f"/api/v1/projects/{project.id}/tags", {"name": "a rather long tag name to wrap"})
    browser = browser_for("ada", width=PHONE_WIDTH)
    open_settings(browser, site, project)
    assert browser.execute_script("return document.documentElement.scrollWidth - window.innerWidth") == 0
    shoot(browser, "settings-4-phone")


def test_an_export_and_an_import_with_their_progress_and_the_download(site, project, browser_for):
    site.add_ticket(project, "Keep me")
    browser = browser_for("ada")
    wait = open_settings(browser, site, project)
    transfers = section(browser, "import-export")
    bar = transfers.find_element(By.CSS_SELECTOR, "[data-progress]")

    transfers.find_element(By.CSS_SELECTOR, "[data-form=export] button").click()
    wait.until(lambda _: transfers.find_element(By.CSS_SELECTOR, "[data-transfer-status]").text == "succeeded")
    assert transfers.find_element(By.CSS_SELECTOR, "[data-transfer-detail]").text == "Ready."
    assert bar.get_attribute("value") == bar.get_attribute("max")
    link = transfers.find_element(By.CSS_SELECTOR, "[data-download-link]")
    assert link.is_displayed()
    status, kind, head = browser.execute_script("""
        const response = await fetch(arguments[0]);
        const bytes = new Uint8Array(await response.arrayBuffer());
        return [response.status, response.headers.get("Content-Type"), String.fromCharCode(bytes[0], bytes[1])];
    """, link.get_attribute("href"))
    assert (status, kind, head) == (200, "application/zip", "PK")
    job_id = link.get_attribute("href").rstrip("/").split("/")[-2]
    assert site.ok("ada", "GET", f"/api/v1/jobs/{job_id}")["job"]["status"] == "succeeded"

    Select(transfers.find_element(By.NAME, "source")).select_by_value("trello")
    transfers.find_element(By.NAME, "file").send_keys(str(SAMPLES / "trello-board.json"))
    transfers.find_element(By.CSS_SELECTOR, "[data-form=import] button").click()
    wait.until(lambda _: transfers.find_element(By.CSS_SELECTOR, "[data-transfer-what]").text == "Import")
    wait.until(lambda _: transfers.find_element(By.CSS_SELECTOR, "[data-transfer-status]").text == "succeeded")
    assert transfers.find_element(By.CSS_SELECTOR, "[data-transfer-detail]").text.startswith("Created ")
    assert bar.get_attribute("value") == bar.get_attribute("max")
    titles = [t["title"] for t in site.ok("ada", "GET", f"/api/v1/projects/{project.id}/tickets")["tickets"]]
    assert "Keep me" in titles and len(titles) > 1
    # The columns the import added show on the page, read again.
    wait.until(lambda _: len(section(browser, "statuses").find_elements(By.CSS_SELECTOR, "[data-status-slug]"))
               == len(statuses(site, project)))
    shoot_whole(browser, "settings-5-import-export")


def test_an_open_board_says_when_its_columns_change(site, project, browser_for):
    board = browser_for("bob")
    board.get(f"{site.url}{project.page}")
    WebDriverWait(board, WAIT_SECONDS).until(lambda _: board.find_elements(By.CSS_SELECTOR, "[data-synced]"))
    WebDriverWait(board, WAIT_SECONDS).until(
        lambda _: board.find_element(By.CSS_SELECTOR, "[data-live-status]").get_attribute("data-live-status") == "live")
    site.ok("ada", "POST", f"/api/v1/projects/{project.id}/statuses", {"label": "QA"})
    WebDriverWait(board, WAIT_SECONDS).until(
        lambda _: "columns were changed" in board.find_element(By.CSS_SELECTOR, "[data-toast]").text)
