"""Every page a team uses, at a desktop's and a phone's width: no serious or critical accessibility violation
found by axe-core (run in Chromium by axe-selenium-python, which bundles it), no script in the page itself (the
content security policy allows none, and no console error or CSP report: browser_for checks), and nothing wider
than a phone's screen. A whole-page screenshot of each (BOARD_SCREENSHOTS)."""

import re

import pytest
from axe_selenium_python import Axe
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.browser_site import PHONE_WIDTH, WAIT_SECONDS, expect_refusal, shoot_whole

pytestmark = pytest.mark.browser

WIDTHS = {"desktop": 1400, "phone": PHONE_WIDTH}
# What each page needs before it is looked at: it is drawn.
READY = {
    "projects": ".project-list",
    "board": "[data-board][data-synced]",
    "settings": "body[data-settings-loaded]",
    "docs": "[data-docs]",
}


@pytest.fixture(scope="module")
def pages(site):
    """One project with a little of everything, and the paths of its pages."""
    project = site.new_project()
    base = f"/api/v1/projects/{project.id}"
    tag = site.ok("ada", "POST", f"{base}/tags", {"name": "flight", "color": "#22a06b"})["tag"]
    ticket = site.add_ticket(project, "Land softly", description="- [x] fuel\n- [ ] wings\n\n**Go**",
                             priority="high", deadline="2031-05-06", checklist=["Check"], tags=[tag["id"]])
    site.add_ticket(project, "Build the lander", status="in_progress")
    site.ok("bob", "POST", f"{base}/tickets/1/comments", {"comment": "On it"})
    folder = site.ok("ada", "POST", f"{base}/docs/folders", {"title": "Operations"})["folder"]
    article = site.ok("ada", "POST", f"{base}/docs/articles", {
        "title": "Runbook", "folder_id": folder["id"], "content": "# Deploy\n\n- [x] build\n- [ ] ship\n\n| a | b |\n|---|---|\n| 1 | 2 |"})["article"]
    site.ok("vic", "POST", f"{base}/docs/articles/{article['id']}/comments", {"message": "Seen *it*"})
    docs = f"/projects/{project.id}/docs"
    return {
        "projects": ("/projects/", "projects"),
        "board": (project.page, "board"),
        "board-panel": (f"{project.page}?ticket={ticket['project_ticket_number']}", "board"),
        "settings": (f"/projects/{project.id}/settings/", "settings"),
        "docs-home": (f"{docs}/", "docs"),
        "docs-article": (f"{docs}/articles/{article['id']}/", "docs"),
        "docs-article-editing": (f"{docs}/articles/{article['id']}/?edit", "docs"),
    }


def serious_violations(browser) -> list[str]:
    axe = Axe(browser)
    axe.inject()
    results = axe.run()
    return [f"{violation['id']} ({violation['impact']}): {[node['target'] for node in violation['nodes']][:5]}"
            for violation in results["violations"] if violation["impact"] in ("serious", "critical")]


def inline_scripts(html: str) -> list[str]:
    """Script elements with a body, but the data blocks of json_script (type application/json)."""
    return [match.group(0)[:80] for match in re.finditer(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>",
                                                          html)]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("page", ["projects", "board", "board-panel", "settings", "docs-home", "docs-article",
                                  "docs-article-editing"])
def test_the_page_is_accessible_keeps_the_policy_and_fits(site, pages, browser_for, page, width):
    path, kind = pages[page]
    browser = browser_for("ada", width=WIDTHS[width])
    browser.get(f"{site.url}{path}")
    wait = WebDriverWait(browser, WAIT_SECONDS, poll_frequency=0.05)
    wait.until(lambda _: browser.find_elements(By.CSS_SELECTOR, READY[kind]))
    if page == "board-panel":
        wait.until(lambda _: browser.find_elements(By.CSS_SELECTOR, "[data-panel-field=description] input"))
    if page == "docs-article-editing":
        wait.until(lambda _: browser.find_element(By.CSS_SELECTOR, "[data-form=article]").is_displayed())

    assert serious_violations(browser) == []
    assert inline_scripts(browser.page_source) == []
    assert browser.execute_script("return document.documentElement.scrollWidth - document.documentElement.clientWidth") \
        == 0
    shoot_whole(browser, f"page-{page}-{width}")


@pytest.mark.parametrize("width", WIDTHS)
def test_the_dialogs_and_menus_are_accessible(site, pages, browser_for, width):
    browser = browser_for("ada", width=WIDTHS[width])
    browser.get(f"{site.url}{pages['board'][0]}")
    wait = WebDriverWait(browser, WAIT_SECONDS, poll_frequency=0.05)
    wait.until(lambda _: browser.find_elements(By.CSS_SELECTOR, "[data-board][data-synced]"))
    browser.find_element(By.CSS_SELECTOR, "[data-notification-badge]").click()
    wait.until(lambda _: browser.find_element(By.ID, "notifications-panel").is_displayed())
    assert serious_violations(browser) == []
    browser.find_element(By.CSS_SELECTOR, "[data-notification-badge]").click()
    wait.until(lambda _: not browser.find_element(By.ID, "notifications-panel").is_displayed())
    browser.find_element(By.CSS_SELECTOR, "[data-keys-open]").click()
    wait.until(lambda _: browser.find_element(By.CSS_SELECTOR, "[data-keys-dialog]").is_displayed())
    assert serious_violations(browser) == []
    shoot_whole(browser, f"page-board-keys-{width}")
    browser.find_element(By.CSS_SELECTOR, "[data-keys-dialog] button").click()


@pytest.mark.parametrize("username", ["vic", "cy"])
def test_the_pages_of_lower_roles_are_accessible_too(site, pages, browser_for, username):
    browser = browser_for(username)
    for page in ["board-panel", "docs-article"]:
        path, kind = pages[page]
        browser.get(f"{site.url}{path}")
        ready = READY[kind]
        WebDriverWait(browser, WAIT_SECONDS).until(lambda _, ready=ready: browser.find_elements(By.CSS_SELECTOR, ready))
        assert serious_violations(browser) == [], page
    expect_refusal(browser, pages["settings"][0], 403)
    browser.get(f"{site.url}{pages['settings'][0]}")
    assert browser.find_element(By.TAG_NAME, "h1").text == "Not allowed"
    assert serious_violations(browser) == []


def test_the_login_page_is_accessible(site, open_browser):
    browser = open_browser(width=PHONE_WIDTH)
    browser.get(f"{site.url}/accounts/login/")
    assert serious_violations(browser) == []
    assert browser.execute_script("return document.documentElement.scrollWidth - document.documentElement.clientWidth") \
        == 0
    shoot_whole(browser, "page-login-phone")
