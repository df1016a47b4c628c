import asyncio
import os
import socket
import uuid
from contextlib import contextmanager

import pytest
from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.db import connection

from accounts.services import issue_token
from config.application import django_asgi_app
from config.settings import cache_config
from core import background
from core.queries import prepares_statements
from projects.roles import Role

from .browser_site import browsers_checked, console_of, console_problems, new_browser, serving_site, sign_in
from .factories import MembershipFactory, ProjectFactory, UserFactory
from .mail import SmtpServer
from .s3 import MotoServer
from .schema import SchemaCheckedClient

ROLES = [Role.VIEWER, Role.CONTRIBUTOR, Role.EDITOR, Role.DEVELOPER, Role.MANAGER]


def pytest_collection_modifyitems(config, items):
    """Behind PgBouncer (DATABASE_PREPARED_STATEMENTS=0) the tests of what it hides are skipped: .ci/run runs
    them against PostgreSQL itself. The browser tests start a server of their own on a SQLite file whatever
    the suite runs on: the PostgreSQL pass runs them (or any run with BROWSER_TESTS=1), the quick pass on the
    defaults does not run them a second time."""
    skips = {}
    if connection.vendor == "postgresql" and not prepares_statements(connection):
        skips["direct_postgres"] = "needs PostgreSQL itself, not PgBouncer (DATABASE_PREPARED_STATEMENTS=0)"
    if connection.vendor != "postgresql" and not os.environ.get("BROWSER_TESTS"):
        skips["browser"] = "in the PostgreSQL pass, or with BROWSER_TESTS=1"
    for item in items:
        for marker, reason in skips.items():
            if marker in item.keywords:
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix, tmp_path_factory):
    """On SQLite the test database is a file, not Django's shared in-memory one: background threads (the webhook
    sender's) write to it beside the test, and in shared-cache memory a second writer is refused at once ("table
    is locked") instead of waiting its turn."""
    from django.conf import settings

    database = settings.DATABASES["default"]
    if database["ENGINE"] == "django.db.backends.sqlite3":
        database.setdefault("TEST", {})["NAME"] = str(tmp_path_factory.mktemp("database") / "test.sqlite3")


@pytest.fixture(autouse=True)
def _test_server(settings):
    # TLS ends at the proxy in production; the test client speaks plain HTTP to the app.
    settings.SECURE_SSL_REDIRECT = False
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # speed only
    # Tests do not run collectstatic, so there is no manifest to look names up in.
    settings.STORAGES = {**settings.STORAGES,
                         "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}
    # Rate-limit and login-failure counters of one test are not another's (Redis outlives the test).
    settings.CACHES = {"default": {**settings.CACHES["default"], "KEY_PREFIX": f"test-{uuid.uuid4().hex}"}}


@pytest.fixture(autouse=True)
def _no_runner_left_behind():
    """Work handed to this process's own threads (the tests have no broker: core.background, and its services such
    as the webhook sender)
    is finished by the end of the test that handed it out: a runner left going would sweep the database under
    the next tests (Database access not allowed, or a flush that finds SQLite's tables locked)."""
    yield
    background.stop_local_runner()
    background.stop_services()


@pytest.fixture(autouse=True)
def _no_request_thread_kept():
    """The threads requests ran in are kept for the next request (config/handler.py), and on SQLite with their
    persistent connection: a test without database access would find the last test's connection open."""
    yield
    django_asgi_app.threads.stop_idle()


@pytest.fixture(autouse=True)
def _media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture(scope="session")
def s3_server():
    """moto's standalone S3 server on a free loopback port, for the whole run (tests/s3.py)."""
    with MotoServer() as server:
        yield server


@pytest.fixture
def bucket(s3_server, settings):
    """A new bucket on that server, holding every stored file of the test (settings as AWS_* would set them)."""
    bucket = s3_server.new_bucket()
    for name, value in bucket.settings().items():
        setattr(settings, name, {**settings.STORAGES, **value} if name == "STORAGES" else value)
    return bucket


@pytest.fixture
def smtp_server(settings, transactional_db):
    """A real SMTP server (tests/mail.py) that this test's e-mails go to, sent by this process's background runner
    after the writes commit; `smtp_server.wait_for(count)` waits for them."""
    with SmtpServer() as server:
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", server.port
        settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
        settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""
        settings.CELERY_BROKER_URL = ""
        settings.BACKGROUND_SCHEDULE = {}
        yield server
        background.stop_local_runner()


@pytest.fixture
def pipelines(monkeypatch):
    """One entry per time psycopg's connections went into pipeline mode (one round trip each): the number of
    statements sent in it, which are counted while django_assert_num_queries (or CaptureQueriesContext)
    records them."""
    from psycopg import Connection

    sent = []
    original = Connection.pipeline

    @contextmanager
    def counted(self):
        before = len(connection.queries_log)
        with original(self) as pipeline:
            yield pipeline
        sent.append(len(connection.queries_log) - before)

    monkeypatch.setattr(Connection, "pipeline", counted)
    return sent


@pytest.fixture
def anonymous():
    return SchemaCheckedClient()


@pytest.fixture
def client_for(db):
    """An API client authenticated with a real token of `user`, issued by the real service; every answer
    it receives is checked against the API reference."""

    def make(user) -> SchemaCheckedClient:
        client = SchemaCheckedClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {issue_token(user=user)[1]}")
        return client

    return make


@pytest.fixture
def project(db):
    return ProjectFactory(name="Apollo", prefix="APL")


@pytest.fixture
def manager(project):
    return project.owner


@pytest.fixture
def member_with(project):
    """A new user holding `role` in the project."""

    def make(role: Role):
        return MembershipFactory(project=project, role=role).user

    return make


@pytest.fixture
def editor(member_with):
    return member_with(Role.EDITOR)


@pytest.fixture
def viewer(member_with):
    return member_with(Role.VIEWER)


@pytest.fixture
def outsider(db):
    return UserFactory()


@pytest.fixture
def staff(client, db):
    """A browser logged in to the admin as a superuser."""
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    return client


class GroupListener:
    """A channel in a channel-layer group, as a websocket consumer in that group would be."""

    def __init__(self, group: str):
        self.layer = get_channel_layer()
        self.group = group
        self.channel = async_to_sync(self.layer.new_channel)()
        async_to_sync(self.layer.group_add)(self.group, self.channel)

    def messages(self) -> list[dict]:
        """Every message received so far. The writes under test send theirs before this is called (on commit,
        run by the test): the in-memory layer has them queued already, Redis within a round trip; the
        wait only tells that nothing more is coming."""
        quiet = 0.02 if isinstance(self.layer, InMemoryChannelLayer) else 0.1

        async def drain():
            received = []
            while True:
                try:
                    received.append(await asyncio.wait_for(self.layer.receive(self.channel), timeout=quiet))
                except asyncio.TimeoutError:
                    return received

        return async_to_sync(drain)()

    def close(self):
        async_to_sync(self.layer.group_discard)(self.group, self.channel)


REDIS_TIMEOUT = 0.3  # of the clients of hung_redis and refused_redis


@pytest.fixture
def hung_redis(settings):
    """A Redis that accepts connections and never answers: the kernel completes the handshakes of a listening
    socket that is never accepted from, and nothing is ever read or written."""
    with socket.create_server(("127.0.0.1", 0), backlog=64) as listener:
        settings.CACHES = cache_config(f"redis://127.0.0.1:{listener.getsockname()[1]}/0", timeout=REDIS_TIMEOUT)
        yield


@pytest.fixture
def refused_redis(settings):
    """A Redis that refuses connections: a port held, where nobody listens."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        settings.CACHES = cache_config(f"redis://127.0.0.1:{held.getsockname()[1]}/0", timeout=REDIS_TIMEOUT)
        yield


# ---- pages in a real browser (tests/browser_site.py) ----------------------------------------------------------


@pytest.fixture(scope="session")
def site(tmp_path_factory):
    """One server for every browser test of the session (and xdist worker), with its four people."""
    with serving_site(tmp_path_factory) as site:
        yield site


@pytest.fixture
def open_browser():
    """`open_browser(width=1400)`: a new browser, checked and closed when the test ends."""
    with browsers_checked() as make:
        yield make


@pytest.fixture(scope="module")
def _module_browsers(site):
    opened = {}

    def get(username: str, width: int):
        if (username, width) not in opened:
            browser = new_browser(width)
            sign_in(browser, site, username, "/projects/").until(lambda _: "/projects/" in browser.current_url
                                                                 and "login" not in browser.current_url)
            opened[username, width] = browser
        return opened[username, width]

    yield get
    for browser in opened.values():
        browser.quit()


@pytest.fixture
def browser_for(_module_browsers):
    """`browser_for("ada", width=1400)`: that person's browser, signed in once for the whole module (a browser
    starts in seconds, a page loads in milliseconds); its console is checked when each test ends, as
    open_browser's are."""
    used = []

    def get(username: str, width: int = 1400):
        browser = _module_browsers(username, width)
        if browser not in used:
            console_of(browser)
            browser.console, browser.expected_refusals = [], []
            used.append(browser)
        return browser

    yield get
    problems = [problem for browser in used for problem in console_problems(browser)]
    assert problems == [], "the console reported problems"
