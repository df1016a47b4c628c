"""Two server processes on one PostgreSQL database and one Redis: access ended through one of them
closes, within a second, a socket held by the other (whose recheck would not, without frames)."""

import asyncio
import os
import secrets
import urllib.error
import urllib.request
from contextlib import AsyncExitStack

import pytest
from django.conf import settings
from django.test import Client
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from accounts.consumers import ACCESS_LOST
from accounts.services import issue_token
from tests.factories import MembershipFactory, ProjectFactory

from .conftest import SEVERAL_PROCESSES
from .servers import DaphneServer, served_database_url

pytestmark = SEVERAL_PROCESSES


@pytest.fixture
def servers():
    env = {"DATABASE_URL": served_database_url(), "REDIS_URL": os.environ["REDIS_URL"]}
    with DaphneServer(env) as server_a, DaphneServer(env) as server_b:
        yield server_a, server_b


def post_form(server: DaphneServer, path: str, session_key: str) -> int:
    """A logged-in browser's form POST: session cookie and CSRF token."""
    csrf = secrets.token_hex(16)  # Django accepts its 32-character secret unmasked
    request = urllib.request.Request(
        f"{server.url}{path}", data=f"csrfmiddlewaretoken={csrf}".encode(), method="POST",
        headers={"Cookie": f"{settings.SESSION_COOKIE_NAME}={session_key}; {settings.CSRF_COOKIE_NAME}={csrf}",
                 "Content-Type": "application/x-www-form-urlencoded"},
    )

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args):
            return None

    try:
        with urllib.request.build_opener(NoRedirect).open(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as answer:
        return answer.code


async def close_codes(sockets: dict[str, tuple[str, str]], end_access) -> dict[str, int | None]:
    """Open each socket (url, token), end access, then the close code of each within a second (None: open)."""
    async with AsyncExitStack() as stack:
        opened = {name: await stack.enter_async_context(connect(
            url, additional_headers={"Authorization": f"Bearer {token}"}, open_timeout=10))
            for name, (url, token) in sockets.items()}
        await asyncio.to_thread(end_access)

        async def code(socket) -> int | None:
            try:
                await asyncio.wait_for(socket.recv(), timeout=1)
            except ConnectionClosed as closed:
                return closed.rcvd.code
            except TimeoutError:
                return None
            raise AssertionError("no frame was expected")

        return {name: await code(socket) for name, socket in opened.items()}


def test_revoking_on_server_a_closes_the_socket_on_server_b(servers, project, viewer):
    server_a, server_b = servers
    token, plain = issue_token(user=viewer)
    other = issue_token(user=viewer)[1]
    board = f"{server_b.ws_url}/ws/v1/projects/{project.id}/board/"
    browser = Client()
    browser.force_login(viewer)
    session_key = browser.cookies[settings.SESSION_COOKIE_NAME].value

    codes = asyncio.run(close_codes(
        {"revoked": (board, plain), "other token": (board, other)},
        lambda: post_form(server_a, f"/profile/api-access/{token.pk}/revoke", session_key) == 302 or pytest.fail(),
    ))

    assert codes == {"revoked": ACCESS_LOST, "other token": None}


def test_removing_a_member_closes_their_board_on_the_other_server(servers, project, viewer):
    server_a, server_b = servers
    other_project = ProjectFactory(name="Gemini", prefix="GEM")
    MembershipFactory(project=other_project, user=viewer)
    plain = issue_token(user=viewer)[1]

    codes = asyncio.run(close_codes(
        {"removed": (f"{server_b.ws_url}/ws/v1/projects/{project.id}/board/", plain),
         "other project": (f"{server_b.ws_url}/ws/v1/projects/{other_project.id}/board/", plain)},
        lambda: server_a.manage("removemember", str(project.id), viewer.username),
    ))

    assert codes == {"removed": ACCESS_LOST, "other project": None}
