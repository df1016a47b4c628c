"""The pages in a real browser: one server (daphne, its own SQLite file, black box) per test session and
worker, four people with a role each in a new project per test, and Chromium through selenium. The fixtures
(`site`, `open_browser`) are in tests/conftest.py; the helpers here.

Every browser is checked when its test ends: nothing in its console at level SEVERE (a failed request, an
uncaught error, a Content-Security-Policy refusal) and no CSP report of any level.
"""

import base64
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

from tests.browsers import CHROMEDRIVER, CHROMIUM, headless_chromium
from tests.factories import PASSWORD
from tests.mail import SmtpServer
from tests.realtime.servers import ROOT, DaphneServer

# (name, role in each test's project); ada creates the projects, so she is their manager.
PEOPLE = {"ada": ("Ada Lovelace", "manager"), "bob": ("Bob Marley", "editor"),
          "cy": ("Cy Twombly", "contributor"), "vic": ("Vic Viewer", "viewer")}
WAIT_SECONDS = 10
PHONE_WIDTH = 390
PROJECTS_PER_BATCH = 6


@dataclass
class Project:
    id: int
    prefix: str

    @property
    def page(self) -> str:
        return f"/projects/{self.id}/board/"


class Site:
    """The server, its people and their tokens, what it e-mails; the API as each of them calls it."""

    def __init__(self, server: DaphneServer, mail: SmtpServer):
        self.server = server
        self.mail = mail  # the SMTP server the site sends its e-mails to
        self.url = server.url
        self.tokens: dict[str, str] = {}
        self.spare_projects: list[Project] = []
        self.people_made = 0

    def commands(self, *calls: list[str]) -> list[str]:
        """Operator commands (createuser, addmember, …) against the server's database, in one process (each
        process starts Django: seconds on a busy machine); the last line each printed."""
        script = (f"import io, json; from django.core.management import call_command; outputs = []\n"
                  f"for call in json.loads({json.dumps(json.dumps(calls))}):\n"
                  f"    out = io.StringIO(); call_command(*call, stdout=out)\n"
                  f"    outputs.append(out.getvalue().strip().splitlines()[-1])\n"
                  f"print(json.dumps(outputs))")
        result = subprocess.run([sys.executable, "manage.py", "shell", "-c", script], cwd=ROOT, env=self.server.env,
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout.strip().splitlines()[-1])

    def call(self, who: str, method: str, path: str, body: dict | None = None) -> tuple[int, dict | None]:
        request = urllib.request.Request(
            f"{self.url}{path}", method=method, data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {self.tokens[who]}", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, json.load(response)
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def ok(self, who: str, method: str, path: str, body: dict | None = None) -> dict:
        status, answer = self.call(who, method, path, body)
        assert status in (200, 201), (status, answer)
        return answer

    def new_project(self) -> Project:
        """A project of ada's (its manager) with bob, cy and vic in their roles; made by the batch."""
        if not self.spare_projects:
            made = [self.ok("ada", "POST", "/api/v1/projects", {"name": "Apollo", "prefix": "APL"})["project"]
                    for _ in range(PROJECTS_PER_BATCH)]
            self.commands(*[["addmember", str(project["id"]), username, role]
                            for project in made for username, (_, role) in PEOPLE.items() if username != "ada"])
            self.spare_projects = [Project(project["id"], project["prefix"]) for project in made]
        return self.spare_projects.pop(0)

    def new_person(self, project: Project, role: str) -> str:
        """A new user, member of `project` with `role`, with a token; their username (also their password's
        owner: PASSWORD). For what must be one person's alone, such as their notifications."""
        self.people_made += 1
        username = f"person{self.people_made}"
        *_, token = self.commands(["createuser", username, "--name", f"Person {self.people_made}", "--password",
                                   PASSWORD], ["addmember", str(project.id), username, role], ["issuetoken", username])
        self.tokens[username] = token
        return username

    def email_to(self, address: str):
        """The first e-mail the site sent to `address`, once it arrives (AssertionError after WAIT_SECONDS)."""
        sent = lambda: [message for message in self.mail.messages if message["To"] == address]  # noqa: E731
        with self.mail.arrived:
            if not self.mail.arrived.wait_for(sent, timeout=WAIT_SECONDS):
                raise AssertionError(f"no e-mail to {address} within {WAIT_SECONDS} s")
            return sent()[0]

    def add_ticket(self, project: Project, title: str, by: str = "ada", **fields) -> dict:
        """The new ticket in its board shape."""
        ref = self.ok(by, "POST", f"/api/v1/projects/{project.id}/tickets", {"title": title, **fields})["ticket_ref"]
        return self.ticket(project, ref)

    def ticket(self, project: Project, ref: str) -> dict:
        return next(ticket for column in self.board(project)["columns"] for ticket in column["tickets"]
                    if ticket["prefix_ref"] == ref)

    def board(self, project: Project) -> dict:
        return self.ok("ada", "GET", f"/api/v1/projects/{project.id}/board")

    def order(self, project: Project) -> dict[str, list[int]]:
        """Each column's ticket ids in board order, as the API has them."""
        return {column["status"]: [ticket["id"] for ticket in column["tickets"]]
                for column in self.board(project)["columns"]}

    def detail(self, project: Project, number: int) -> dict:
        return self.ok("ada", "GET", f"/api/v1/projects/{project.id}/tickets/{number}")["ticket"]


def new_browser(width: int):
    driver = headless_chromium(width)
    driver.console = []  # what the console said, kept by console_of (reading the log empties it)
    driver.expected_refusals = []
    return driver


def expect_refusal(browser, path: str, status: int) -> None:
    """A request the test makes the API refuse: the browser logs every such answer in its console."""
    browser.expected_refusals.append(f"{path} - Failed to load resource: the server responded with a status of "
                                     f"{status} ")


def console_of(browser) -> list[dict]:
    browser.console.extend(browser.get_log("browser"))
    return browser.console


def console_problems(browser) -> list[str]:
    return [entry["message"] for entry in console_of(browser)
            if (entry["level"] == "SEVERE" or "Content Security Policy" in entry["message"])
            and not any(expected in entry["message"] for expected in browser.expected_refusals)]


def sign_in(browser, site: Site, username: str, path: str) -> WebDriverWait:
    """Log in through the login page, land on `path`; a wait for that browser."""
    browser.get(f"{site.url}/accounts/login/?next={path}")
    browser.find_element(By.NAME, "username").send_keys(username)
    browser.find_element(By.NAME, "password").send_keys(PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    return WebDriverWait(browser, WAIT_SECONDS, poll_frequency=0.05)


def open_board(browser, site: Site, username: str, project: Project, query: str = "") -> WebDriverWait:
    """The board page open, live and drawn as the server has it (its socket and the notifications' connected,
    the board read once they are)."""
    wait = sign_in(browser, site, username, f"{project.page}{query}")
    wait.until(expected_conditions.presence_of_element_located((By.CSS_SELECTOR, "[data-board][data-synced]")))
    wait.until(expected_conditions.presence_of_element_located((By.CSS_SELECTOR, "[data-notification-badge][data-live]")))
    browser.execute_script("window.sameDocument = true")  # gone if the page reloads
    return wait


def shown_order(browser) -> dict[str, list[int]]:
    """Each column's card ids in the order the page shows them."""
    return browser.execute_script("""
        return Object.fromEntries([...document.querySelectorAll("[data-status]")].map((column) => [
            column.dataset.status,
            [...column.querySelectorAll("[data-ticket-id]")].map((card) => Number(card.dataset.ticketId))]));
    """)


def card(browser, ticket_id: int):
    return browser.find_element(By.CSS_SELECTOR, f'[data-ticket-id="{ticket_id}"]')


def still_same_document(browser) -> bool:
    return browser.execute_script("return window.sameDocument === true")


def shoot(browser, name: str) -> None:
    """A screenshot under BOARD_SCREENSHOTS (a folder), when set: to look at each state."""
    folder = os.environ.get("BOARD_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(Path(folder) / f"{name}.png"))


def drag(browser, ticket_id: int, onto: int, half: str) -> None:
    """Press on a card, move to the upper or lower half of another card and release there, in steps, as a
    hand would (real pointer events: SortableJS sees what a mouse does)."""
    target = card(browser, onto)
    offset = target.size["height"] // 4 * (-1 if half == "upper" else 1)
    ActionChains(browser, duration=40).move_to_element(card(browser, ticket_id)).click_and_hold() \
        .move_by_offset(0, 8).move_to_element_with_offset(target, 0, offset // 2) \
        .move_to_element_with_offset(target, 0, offset).pause(0.1).release().perform()  # SortableJS places every 50 ms


def drag_to_column(browser, ticket_id: int, status: str) -> None:
    """Drop a card on a column's empty space (below its cards)."""
    cards = browser.find_element(By.CSS_SELECTOR, f'[data-status="{status}"] .cards')
    ActionChains(browser, duration=40).move_to_element(card(browser, ticket_id)).click_and_hold() \
        .move_by_offset(0, 8).move_to_element(cards).move_to_element_with_offset(cards, 0, 4).pause(0.1).release() \
        .perform()


def toast_text(browser) -> str:
    return browser.execute_script('const toast = document.querySelector("[data-toast]");'
                                  "return toast.hidden ? '' : toast.textContent.trim()")


@contextmanager
def serving_site(tmp_path_factory):
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.skip("needs chromium and chromedriver")
    database = tmp_path_factory.mktemp("board-site") / "site.sqlite3"
    with SmtpServer() as mail:
        server = DaphneServer({
            "DATABASE_URL": f"sqlite:///{database}", "DJANGO_DEBUG": "1", "REDIS_URL": "",
            "MEDIA_ROOT": str(database.parent / "media"),
            "WEBHOOK_ALLOWED_PRIVATE_HOSTS": "127.0.0.1",  # the receivers of tests/pages listen there
            "EMAIL_HOST": "127.0.0.1", "EMAIL_PORT": str(mail.port),
            # Every browser signs in from 127.0.0.1, about once a test: run alone, the browser tests passed the
            # limits of one address (20 logins a minute) and of one username (10), and a sign-in got a 429 page.
            "LOGIN_RATE_LIMIT_PER_MINUTE": "1000", "LOGIN_USERNAME_RATE_LIMIT_PER_MINUTE": "1000"})
        server.env["SITE_URL"] = server.url  # the links of its e-mails lead back to it
        with server:
            site = Site(server, mail)
            server.manage("migrate", "--no-input")
            made = site.commands(*[["createuser", username, "--name", name, "--password", PASSWORD]
                                   for username, (name, _) in PEOPLE.items()],
                                 *[["issuetoken", username] for username in PEOPLE])
            site.tokens = dict(zip(PEOPLE, made[len(PEOPLE):], strict=True))
            yield site


@contextmanager
def browsers_checked():
    """`open_browser(width=1400)`: a new browser, checked and closed when the test ends."""
    browsers = []

    def make(width: int = 1400):
        browsers.append(new_browser(width))
        return browsers[-1]

    yield make
    problems = {index: console_problems(browser) for index, browser in enumerate(browsers)}
    for browser in browsers:
        browser.quit()
    assert {index: found for index, found in problems.items() if found} == {}, "the console reported problems"


def visit_board(browser, site: Site, project: Project, query: str = "") -> WebDriverWait:
    """The board page, in a browser already signed in (browser_for), open and drawn as the server has it."""
    browser.get(f"{site.url}{project.page}{query}")
    wait = WebDriverWait(browser, WAIT_SECONDS, poll_frequency=0.05)
    wait.until(expected_conditions.presence_of_element_located((By.CSS_SELECTOR, "[data-board][data-synced]")))
    browser.execute_script("window.sameDocument = true")  # gone if the page reloads
    return wait


def shoot_whole(browser, name: str) -> None:
    """A screenshot of the whole page, beyond the window (BOARD_SCREENSHOTS, when set)."""
    folder = os.environ.get("BOARD_SCREENSHOTS")
    if not folder:
        return
    size = browser.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
    shot = browser.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], 6000), "scale": 1}})
    Path(folder).mkdir(parents=True, exist_ok=True)
    (Path(folder) / f"{name}.png").write_bytes(base64.b64decode(shot["data"]))
