"""The profile page and the unsubscribe pages in a real browser: accessible (axe), no script in the page, nothing
wider than a phone's screen, no console error; a change made there is the account's (GET /api/v1/me)."""

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from accounts.models import User
from notifications.unsubscribe import unsubscribe_token
from tests.browser_site import PHONE_WIDTH, WAIT_SECONDS, expect_refusal, shoot_whole, sign_in
from tests.factories import PASSWORD

from .test_every_page import WIDTHS, inline_scripts, serious_violations

pytestmark = pytest.mark.browser


def fits(browser) -> bool:
    return browser.execute_script(
        "return document.documentElement.scrollWidth - document.documentElement.clientWidth") == 0


def looks_right(browser) -> None:
    assert serious_violations(browser) == []
    assert inline_scripts(browser.page_source) == []
    assert fits(browser)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_profile_page_changes_the_account(site, open_browser, width):
    person = site.new_person(site.new_project(), "viewer")
    browser = open_browser(width=WIDTHS[width])
    wait = sign_in(browser, site, person, "/profile/")
    wait.until(lambda _: browser.find_elements(By.CSS_SELECTOR, "[data-form=profile]"))
    looks_right(browser)
    shoot_whole(browser, f"page-profile-{width}")

    browser.find_element(By.ID, "id_email").clear()
    browser.find_element(By.ID, "id_email").send_keys(f"{person}@new.example.com")
    browser.find_element(By.CSS_SELECTOR, "input[name=email_notifications][value=digest]").click()
    browser.find_element(By.CSS_SELECTOR, "[data-form=profile] button[type=submit]").click()
    wait.until(lambda _: browser.find_elements(By.CSS_SELECTOR, "#id_current_password_error, .errorlist"))
    assert "The current password is required to change email" in browser.page_source
    looks_right(browser)  # the refusal is readable too
    shoot_whole(browser, f"page-profile-refused-{width}")
    me = site.ok(person, "GET", "/api/v1/me")["user"]
    assert (me["email"], me["email_notifications"]) == ("", "instant")  # made without an address (createuser)

    browser.find_element(By.ID, "id_current_password").send_keys(PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "input[name=email_notifications][value=digest]").click()
    browser.find_element(By.CSS_SELECTOR, "[data-form=profile] button[type=submit]").click()
    wait.until(lambda _: browser.find_elements(By.CSS_SELECTOR, "[data-saved]"))
    looks_right(browser)
    me = site.ok(person, "GET", "/api/v1/me")["user"]
    assert (me["email"], me["email_notifications"]) == (f"{person}@new.example.com", "digest")


def test_the_header_leads_to_the_profile(site, open_browser):
    person = site.new_person(site.new_project(), "viewer")
    browser = open_browser(width=PHONE_WIDTH)
    wait = sign_in(browser, site, person, "/projects/")
    wait.until(lambda _: browser.find_elements(By.CSS_SELECTOR, ".project-list"))
    assert fits(browser)
    browser.find_element(By.LINK_TEXT, "Profile").click()
    wait.until(lambda _: browser.find_elements(By.CSS_SELECTOR, "[data-form=profile]"))


@pytest.mark.parametrize("width", WIDTHS)
def test_the_unsubscribe_pages_without_a_login(site, open_browser, width):
    person = site.new_person(site.new_project(), "viewer")
    me = site.ok(person, "POST", "/api/v1/me/update", {"email": f"{person}@example.com",
                                                       "current_password": PASSWORD})["user"]
    token = unsubscribe_token(User(pk=me["id"], email=me["email"]))  # the server signs with the same key
    browser = open_browser(width=WIDTHS[width])
    wait = WebDriverWait(browser, WAIT_SECONDS, poll_frequency=0.05)

    browser.get(f"{site.url}/unsubscribe/{token}/")
    looks_right(browser)
    shoot_whole(browser, f"page-unsubscribe-{width}")
    browser.find_element(By.CSS_SELECTOR, "[data-action=unsubscribe]").click()
    wait.until(lambda _: browser.find_elements(By.CSS_SELECTOR, "[data-unsubscribed]"))
    looks_right(browser)
    shoot_whole(browser, f"page-unsubscribed-{width}")
    assert site.ok(person, "GET", "/api/v1/me")["user"]["email_notifications"] == "off"

    tampered = f"/unsubscribe/{token}x/"
    expect_refusal(browser, tampered, 400)
    browser.get(f"{site.url}{tampered}")
    assert browser.find_element(By.TAG_NAME, "h1").text == "This unsubscribe link is not valid"
    looks_right(browser)
