"""Invitations and password resets in a real browser: a manager invites from the settings page's members
section, the e-mail reaches the site's SMTP server, its link opens the invitation's page on a phone and someone
new joins there; a pending invitation revoked from the settings page; a forgotten password reset from the login
page. Each page checked with axe, at a phone's width where a phone opens it."""

import re

import pytest
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from tests.browser_site import PHONE_WIDTH, WAIT_SECONDS, expect_refusal, shoot, shoot_whole
from tests.factories import PASSWORD
from tests.mail import text_of

from .test_every_page import serious_violations
from .test_settings_page import confirm, open_settings, section, status_line

pytestmark = pytest.mark.browser

NEW_PASSWORD = "a quiet orbit over Tycho"


def link_in(message) -> str:
    return re.search(r"(http://\S+/)\s", text_of(message)).group(1)


def fits(browser) -> bool:
    return browser.execute_script(
        "return document.documentElement.scrollWidth - document.documentElement.clientWidth") == 0


def heading_becomes(browser, text: str) -> None:
    """Waits for the page a click leads to (the old page may still answer right after the click)."""
    WebDriverWait(browser, WAIT_SECONDS, poll_frequency=0.05, ignored_exceptions=[StaleElementReferenceException]
                  ).until(lambda _: browser.find_element(By.TAG_NAME, "h1").text == text)


def invitation_rows(browser) -> list[tuple[str, str]]:
    """(address, role) of each pending invitation the members section lists."""
    return [tuple(row.find_element(By.CSS_SELECTOR, f"[data-field={name}]").text for name in ("email", "role"))
            for row in section(browser, "members").find_elements(By.CSS_SELECTOR, "[data-invitation-id]")]


def show_invitations(browser) -> None:
    browser.execute_script("document.getElementById('invitations-title').scrollIntoView()")


def test_an_invitation_sent_from_the_settings_page_lets_someone_new_join(site, project, browser_for, open_browser):
    address = f"grace-{project.id}@example.com"
    invitations = f"/api/v1/projects/{project.id}/invitations"
    browser = browser_for("ada")
    wait = open_settings(browser, site, project)
    assert invitation_rows(browser) == []
    assert section(browser, "members").find_element(By.CSS_SELECTOR, "[data-invitations-empty]").is_displayed()
    form = section(browser, "members").find_element(By.CSS_SELECTOR, "[data-form=invite]")
    form.find_element(By.NAME, "email").send_keys(address)
    Select(form.find_element(By.NAME, "role")).select_by_visible_text("Editor")
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait.until(lambda _: status_line(browser, "members") == f"Invitation sent to {address}.")
    assert invitation_rows(browser) == [(address, "editor")]
    assert [(i["email"], i["role"]) for i in site.ok("ada", "GET", invitations)["invitations"]] == [
        (address, "editor")]

    expect_refusal(browser, invitations, 409)  # the same address again: the API's reason, shown
    form.find_element(By.NAME, "email").send_keys(address)
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait.until(lambda _: status_line(browser, "members") == "Email: an invitation to this address is pending")
    assert len(invitation_rows(browser)) == 1
    assert serious_violations(browser) == []
    show_invitations(browser)
    shoot(browser, "invite-1-settings")

    link = link_in(site.email_to(address))
    newcomer = open_browser(width=PHONE_WIDTH)
    newcomer.get(link)
    assert newcomer.find_element(By.TAG_NAME, "h1").text == "Join Apollo"
    assert serious_violations(newcomer) == [] and fits(newcomer)
    shoot_whole(newcomer, "invite-2-page-phone")
    joining = newcomer.find_element(By.CSS_SELECTOR, "[data-form=new-account]")
    joining.find_element(By.NAME, "username").send_keys(f"grace{project.id}")
    joining.find_element(By.NAME, "password1").send_keys(NEW_PASSWORD)
    joining.find_element(By.NAME, "password2").send_keys(NEW_PASSWORD)
    joining.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    WebDriverWait(newcomer, WAIT_SECONDS).until(lambda _: newcomer.find_elements(By.CSS_SELECTOR,
                                                                                 "[data-board][data-synced]"))
    assert site.ok("ada", "GET", invitations) == {"invitations": []}
    members = site.ok("ada", "GET", f"/api/v1/projects/{project.id}/members")["members"]
    assert {m["name"]: m["role"] for m in members}[f"grace{project.id}"] == "editor"

    expect_refusal(newcomer, link, 410)
    newcomer.get(link)
    assert newcomer.find_element(By.TAG_NAME, "h1").text == "This invitation was used"
    assert serious_violations(newcomer) == [] and fits(newcomer)


def test_a_pending_invitation_revoked_from_the_settings_page(site, project, browser_for, open_browser):
    address = f"lin-{project.id}@example.com"
    site.ok("ada", "POST", f"/api/v1/projects/{project.id}/invitations", {"email": address, "role": "viewer"})
    browser = browser_for("ada", width=PHONE_WIDTH)
    wait = open_settings(browser, site, project)
    assert fits(browser)
    show_invitations(browser)
    shoot(browser, "invite-3-settings-phone")
    row = section(browser, "members").find_element(By.CSS_SELECTOR, "[data-invitation-id]")
    row.find_element(By.CSS_SELECTOR, "[data-action=revoke]").click()
    confirm(browser, wait)
    wait.until(lambda _: not section(browser, "members").find_elements(By.CSS_SELECTOR, "[data-invitation-id]"))
    assert status_line(browser, "members") == f"The invitation of {address} is revoked."
    assert section(browser, "members").find_element(By.CSS_SELECTOR, "[data-invitations-empty]").is_displayed()
    assert site.ok("ada", "GET", f"/api/v1/projects/{project.id}/invitations") == {"invitations": []}

    link = link_in(site.email_to(address))
    stranger = open_browser(width=PHONE_WIDTH)
    expect_refusal(stranger, link, 410)
    stranger.get(link)
    assert stranger.find_element(By.TAG_NAME, "h1").text == "This invitation was withdrawn"
    assert stranger.find_elements(By.CSS_SELECTOR, "form[data-form]") == []


def test_a_forgotten_password_reset_from_the_login_page(site, open_browser):
    address = "reset-me@example.com"
    site.commands(["createuser", "forgetful", "--email", address, "--password", PASSWORD])
    browser = open_browser(width=PHONE_WIDTH)
    browser.get(f"{site.url}/accounts/login/")
    browser.find_element(By.LINK_TEXT, "Forgot your password?").click()
    heading_becomes(browser, "Reset your password")
    assert serious_violations(browser) == [] and fits(browser)
    browser.find_element(By.NAME, "email").send_keys(address)
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    heading_becomes(browser, "Check your e-mail")
    assert serious_violations(browser) == []

    browser.get(link_in(site.email_to(address)))
    assert browser.find_element(By.TAG_NAME, "h1").text == "Choose a new password"
    assert serious_violations(browser) == [] and fits(browser)
    shoot_whole(browser, "reset-1-new-password-phone")
    browser.find_element(By.NAME, "new_password1").send_keys(NEW_PASSWORD)
    browser.find_element(By.NAME, "new_password2").send_keys(NEW_PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    heading_becomes(browser, "Password changed")
    browser.find_element(By.LINK_TEXT, "Log in").click()
    heading_becomes(browser, "Log in")
    browser.find_element(By.NAME, "username").send_keys("forgetful")
    browser.find_element(By.NAME, "password").send_keys(NEW_PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    heading_becomes(browser, "Your projects")
