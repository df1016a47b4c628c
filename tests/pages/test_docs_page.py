"""The documentation area written in the browser: a new folder and article, the article's Markdown edited with a
preview and saved with If-Match (a version saved meanwhile is shown, never overwritten), comments and uploads;
each checked through the API afterwards. A viewer comments, and sees no other writing control."""

import pytest
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from tests.browser_site import PHONE_WIDTH, WAIT_SECONDS, expect_refusal, shoot

pytestmark = pytest.mark.browser


def visit(browser, site, path: str) -> WebDriverWait:
    browser.get(f"{site.url}{path}")
    # A save loads the page again: what was found before it goes stale, and is looked for again.
    wait = WebDriverWait(browser, WAIT_SECONDS, poll_frequency=0.05,
                         ignored_exceptions=(NoSuchElementException, StaleElementReferenceException))
    wait.until(lambda _: browser.find_elements(By.CSS_SELECTOR, "[data-docs]"))
    return wait


def docs_api(project) -> str:
    return f"/api/v1/projects/{project.id}/docs"


def new_article(site, project, title: str, content: str = "") -> dict:
    return site.ok("ada", "POST", f"{docs_api(project)}/articles", {"title": title, "content": content})["article"]


def article_page(project, article) -> str:
    return f"/projects/{project.id}/docs/articles/{article['id']}/"


def test_a_contributor_makes_a_folder_and_an_article_and_writes_it_with_a_preview(site, project, browser_for):
    browser = browser_for("cy")
    wait = visit(browser, site, f"/projects/{project.id}/docs/")

    browser.find_element(By.CSS_SELECTOR, "[data-action=new-folder]").click()
    browser.find_element(By.ID, "new-folder-title").send_keys("Operations")
    browser.find_element(By.CSS_SELECTOR, "[data-form=new-folder] button[type=submit]").click()
    wait.until(lambda _: "Operations" in browser.find_element(By.CSS_SELECTOR, ".docs-sidebar").text)
    [folder] = site.ok("cy", "GET", docs_api(project))["folders"]
    assert folder["title"] == "Operations"

    browser.find_element(By.CSS_SELECTOR, "[data-action=new-article]").click()
    browser.find_element(By.ID, "new-article-title").send_keys("Runbook")
    Select(browser.find_element(By.ID, "new-article-folder")).select_by_visible_text("Operations")
    browser.find_element(By.CSS_SELECTOR, "[data-form=new-article] button[type=submit]").click()
    wait.until(lambda _: "/docs/articles/" in browser.current_url)
    editor = wait.until(lambda _: browser.find_element(By.CSS_SELECTOR, "[data-form=article]"))
    wait.until(lambda _: editor.is_displayed())
    article = site.ok("cy", "GET", f"{docs_api(project)}/folders/{folder['id']}")["articles"][0]
    assert (article["title"], article["folder_id"]) == ("Runbook", folder["id"])

    editor.find_element(By.NAME, "content").send_keys("# Deploy\n\n- [x] build\n- [ ] ship **it**")
    markdown = editor.find_element(By.CSS_SELECTOR, "[data-editor=markdown]")
    markdown.find_element(By.CSS_SELECTOR, "[data-md-preview-toggle]").click()
    preview = markdown.find_element(By.CSS_SELECTOR, "[data-md-preview]")
    wait.until(lambda _: len(preview.find_elements(By.CSS_SELECTOR, "input[type=checkbox][disabled]")) == 2)
    assert preview.find_element(By.TAG_NAME, "strong").text == "it"
    shoot(browser, "docs-1-preview")
    browser.find_element(By.CSS_SELECTOR, "[data-action=save-article]").click()

    wait.until(lambda _: "?edit" not in browser.current_url)
    body = wait.until(lambda _: browser.find_element(By.CSS_SELECTOR, "[data-article-body]"))
    wait.until(lambda _: body.is_displayed() and body.find_elements(By.TAG_NAME, "h1"))
    boxes = body.find_elements(By.CSS_SELECTOR, "input[type=checkbox]")
    assert [(box.is_selected(), box.is_enabled()) for box in boxes] == [(True, False), (False, False)]
    saved = site.ok("cy", "GET", f"{docs_api(project)}/articles/{article['id']}")["article"]
    assert (saved["content"], saved["updated_by"] is not None) == ("# Deploy\n\n- [x] build\n- [ ] ship **it**", True)
    shoot(browser, "docs-2-article")


def test_a_version_saved_meanwhile_is_shown_and_never_overwritten(site, project, browser_for):
    article = new_article(site, project, "Runbook", "Old steps")
    url = f"{docs_api(project)}/articles/{article['id']}"
    browser = browser_for("bob")
    wait = visit(browser, site, article_page(project, article))
    browser.find_element(By.CSS_SELECTOR, "[data-action=edit-article]").click()
    content = browser.find_element(By.CSS_SELECTOR, "[data-form=article] [name=content]")
    wait.until(lambda _: content.get_attribute("value") == "Old steps")
    content.send_keys(" and mine")

    site.ok("ada", "POST", url, {"content": "Ada's steps"})
    expect_refusal(browser, url, 412)
    browser.find_element(By.CSS_SELECTOR, "[data-action=save-article]").click()
    conflict = browser.find_element(By.CSS_SELECTOR, "[data-conflict]")
    wait.until(lambda _: conflict.is_displayed() and "Ada's steps" in conflict.text)
    assert "Ada Lovelace edited it." in conflict.text
    assert site.ok("ada", "GET", url)["article"]["content"] == "Ada's steps"
    assert content.get_attribute("value") == "Old steps and mine"
    shoot(browser, "docs-3-conflict")

    conflict.find_element(By.CSS_SELECTOR, "[data-action=save-mine]").click()  # over it, knowingly
    wait.until(lambda _: site.ok("ada", "GET", url)["article"]["content"] == "Old steps and mine")
    wait.until(lambda _: browser.find_element(By.CSS_SELECTOR, "[data-article-body]").text == "Old steps and mine")


def test_comments_and_uploads(site, project, browser_for, tmp_path):
    article = new_article(site, project, "Runbook")
    url = f"{docs_api(project)}/articles/{article['id']}"
    browser = browser_for("cy")
    wait = visit(browser, site, article_page(project, article))

    notes = tmp_path / "notes.txt"
    notes.write_text("wind 10 kn")
    browser.find_element(By.CSS_SELECTOR, "[data-docs-upload]").send_keys(str(notes))
    wait.until(lambda _: [a["original_name"] for a in site.ok("cy", "GET", url)["attachments"]] == ["notes.txt"])
    link = wait.until(lambda _: browser.find_elements(By.CSS_SELECTOR, ".docs-attachments a"))[0]
    assert browser.execute_script("return fetch(arguments[0]).then((r) => r.text())", link.get_attribute("href")) \
        == "wind 10 kn"

    browser.find_element(By.ID, "docs-comment").send_keys("Checked **twice**")
    browser.find_element(By.CSS_SELECTOR, "[data-action=add-comment]").click()
    wait.until(lambda _: browser.find_elements(By.CSS_SELECTOR, ".docs-comment strong + span + .markdown strong"))
    assert [c["message"] for c in site.ok("cy", "GET", url)["comments"]] == ["Checked **twice**"]
    shoot(browser, "docs-4-comments")


def test_a_viewer_comments_and_sees_no_other_writing_control(site, project, browser_for):
    article = new_article(site, project, "Runbook", "Steps")
    browser = browser_for("vic")
    wait = visit(browser, site, article_page(project, article))
    for css in ["[data-action=new-folder]", "[data-action=new-article]", "[data-action=edit-article]",
                "[data-form=article]", "[data-docs-upload]"]:
        assert browser.find_elements(By.CSS_SELECTOR, css) == [], css
    browser.find_element(By.ID, "docs-comment").send_keys("Seen")
    browser.find_element(By.CSS_SELECTOR, "[data-action=add-comment]").click()
    url = f"{docs_api(project)}/articles/{article['id']}"
    wait.until(lambda _: [c["message"] for c in site.ok("vic", "GET", url)["comments"]] == ["Seen"])
    assert site.call("vic", "POST", url, {"content": "Mine"})[0] == 403
    assert site.call("vic", "POST", f"{docs_api(project)}/folders", {"title": "Mine"})[0] == 403
    assert site.ok("vic", "GET", url)["article"]["content"] == "Steps"


def test_the_docs_fit_a_phone(site, project, browser_for):
    article = new_article(site, project, "A runbook with a title long enough to wrap", "- [ ] one\n\n" + "word " * 80)
    browser = browser_for("ada", width=PHONE_WIDTH)
    visit(browser, site, article_page(project, article))
    assert browser.execute_script("return document.documentElement.scrollWidth - window.innerWidth") == 0
    shoot(browser, "docs-5-phone")
