"""A real browser on the documentation page: an article full of script payloads renders, and none runs."""

import os
from pathlib import Path

import pytest
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

from tests.factories import PASSWORD
from tests.realtime.test_browser import browser, pytestmark, server  # noqa: F401  (fixtures and skip marks)

PAYLOAD = """# Runbook

Some **bold** text and a [safe link](https://example.com).

<script>window.pwned = "script"</script>
[click me](javascript:window.pwned='link')
<img src=x onerror="window.pwned='img'">
<svg onload="window.pwned='svg'"></svg>
![picture](x" onerror="window.pwned='attr')

| step | what |
|------|------|
| 1    | deploy |
"""


def test_an_article_of_payloads_renders_and_runs_nothing(server, browser, tmp_path):  # noqa: F811
    server.manage("createuser", "ada", "--name", "Ada Lovelace", "--password", PASSWORD)
    token = server.manage("issuetoken", "ada")
    project = server.post("/api/v1/projects", {"name": "Apollo", "prefix": "APL"}, token)["project"]
    docs = f"/api/v1/projects/{project['id']}/docs"
    folder = server.post(f"{docs}/folders", {"title": "Operations"}, token)["folder"]
    server.post(f"{docs}/articles", {"title": "Overview"}, token)
    article = server.post(f"{docs}/articles", {"title": "Runbook", "content": PAYLOAD, "folder_id": folder["id"]},
                          token)["article"]

    browser.get(f"{server.url}/accounts/login/?next=/projects/{project['id']}/docs/articles/{article['id']}/")
    browser.find_element(By.NAME, "username").send_keys("ada")
    browser.find_element(By.NAME, "password").send_keys(PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    WebDriverWait(browser, 10).until(expected_conditions.presence_of_element_located((By.CSS_SELECTOR, "table")))

    body = browser.find_element(By.CSS_SELECTOR, "[data-article-body]")
    assert body.find_elements(By.TAG_NAME, "script") == []
    assert body.find_elements(By.TAG_NAME, "svg") == []
    assert "Runbook" in browser.find_element(By.CSS_SELECTOR, ".docs-sidebar").text
    assert browser.execute_script("return window.pwned") is None
    with pytest.raises(NoAlertPresentException):
        browser.switch_to.alert.accept()
    shot = Path(os.environ.get("DOCS_SCREENSHOT", tmp_path / "docs.png"))
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 0
