"""The README's promise on the Procfile's server (two workers, PostgreSQL, Redis): access ended without a
message (SQL, the shell) closes an idle socket within ACCESS_RECHECK_SECONDS (5 s), a token's and a
browser session's alike; a logout closes its session's sockets at once."""

import asyncio
import os
import time

import pytest
from django.conf import settings
from django.db import connections
from django.test import Client
from django.utils import timezone
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from accounts.consumers import ACCESS_LOST, ACCESS_RECHECK_SECONDS
from accounts.models import ApiToken
from accounts.services import issue_token
from tests.security.procfile import ProcfileServer

from .conftest import SEVERAL_PROCESSES
from .servers import served_database_url
from .test_revocation_two_processes import post_form

pytestmark = SEVERAL_PROCESSES


@pytest.fixture(scope="module")
def server(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        env = {"DATABASE_URL": served_database_url(), "REDIS_URL": os.environ["REDIS_URL"], "WEB_CONCURRENCY": "2"}
    with ProcfileServer(env) as server:
        yield server


def session_of(user) -> str:
    browser = Client()
    browser.force_login(user)
    return browser.cookies[settings.SESSION_COOKIE_NAME].value


def closing_connections(work):
    """`work` for another thread, closing that thread's database connections after it (the pool's would
    stay checked out, and the test database busy, until the thread ends)."""

    def run():
        try:
            return work()
        finally:
            connections.close_all()

    return run


async def seconds_until_closed(url: str, headers: dict, end_access, within: float) -> tuple[int | None, float]:
    """Open an idle socket, end access, and wait: its close code and how long it took (None: still open)."""
    async with connect(url, additional_headers=headers, open_timeout=10) as socket:
        await asyncio.to_thread(closing_connections(end_access))
        started = time.monotonic()
        try:
            await asyncio.wait_for(socket.recv(), timeout=within)
        except ConnectionClosed as closed:
            return closed.rcvd.code, time.monotonic() - started
        except TimeoutError:
            return None, within
        raise AssertionError("no frame was expected")


def board_url(server, project) -> str:
    return f"{server.ws_url}/ws/v1/projects/{project.id}/board/"


def test_a_token_revoked_in_sql_closes_its_idle_socket_within_the_recheck(server, project, viewer):
    token, plain = issue_token(user=viewer)
    code, seconds = asyncio.run(seconds_until_closed(
        board_url(server, project), {"Authorization": f"Bearer {plain}"},
        lambda: ApiToken.objects.filter(pk=token.pk).update(revoked_at=timezone.now()),
        within=ACCESS_RECHECK_SECONDS + 2))
    assert code == ACCESS_LOST and seconds <= ACCESS_RECHECK_SECONDS + 1


def test_a_password_changed_in_the_shell_closes_the_session_socket_within_the_recheck(server, project, viewer):
    headers = {"Cookie": f"{settings.SESSION_COOKIE_NAME}={session_of(viewer)}", "Origin": server.url}

    def change_password():
        viewer.set_password("changed in the shell, 42")
        viewer.save()

    code, seconds = asyncio.run(seconds_until_closed(board_url(server, project), headers, change_password,
                                                     within=ACCESS_RECHECK_SECONDS + 2))
    assert code == ACCESS_LOST and seconds <= ACCESS_RECHECK_SECONDS + 1


def test_logging_out_closes_the_session_socket_at_once(server, project, viewer):
    session_key = session_of(viewer)
    headers = {"Cookie": f"{settings.SESSION_COOKIE_NAME}={session_key}", "Origin": server.url}
    code, seconds = asyncio.run(seconds_until_closed(
        f"{server.ws_url}/ws/v1/notifications/", headers,
        lambda: post_form(server, "/accounts/logout/", session_key) == 302 or pytest.fail("logout refused"),
        within=2))
    assert code == ACCESS_LOST and seconds < 1
