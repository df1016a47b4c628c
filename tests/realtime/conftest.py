import contextlib
import os

import pytest
import pytest_asyncio
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.db import connections
from django.test import Client

from accounts.services import issue_token
from config.application import application
from tickets.broadcast import board_group

# Async tests whose consumers and API calls, running in the database thread, must see the test's
# data: it is committed, not held in the test's own transaction.
ASYNC_DB_TESTS = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True),
                  pytest.mark.usefixtures("async_db_connections")]

# Tests of several server processes sharing one PostgreSQL database and one Redis; the servers read
# what the test writes, so it must be committed.
SEVERAL_PROCESSES = [
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.skipif(
        not (os.environ.get("DATABASE_URL", "").startswith("postgres") and os.environ.get("REDIS_URL")),
        reason="needs PostgreSQL (DATABASE_URL) and Redis (REDIS_URL)",
    ),
    pytest.mark.django_db(transaction=True),
]

SAME_ORIGIN = [(b"host", b"testserver"), (b"origin", b"http://testserver")]


def board_path(project_id: int) -> str:
    return f"/ws/v1/projects/{project_id}/board/"


def bearer(plain: str) -> list[tuple[bytes, bytes]]:
    return [(b"authorization", f"Bearer {plain}".encode())]


def cookie(session_key: str) -> list[tuple[bytes, bytes]]:
    return [(b"cookie", f"{settings.SESSION_COOKIE_NAME}={session_key}".encode())]


NOTIFICATIONS_PATH = "/ws/v1/notifications/"


@contextlib.asynccontextmanager
async def open_socket(path: str, headers: list[tuple[bytes, bytes]]):
    """The open websocket, or None when the handshake was refused."""
    communicator = WebsocketCommunicator(application, path, headers=headers)
    connected, _ = await communicator.connect()
    try:
        yield communicator if connected else None
    finally:
        await communicator.disconnect()


def board_socket(project_id: int, headers: list[tuple[bytes, bytes]]):
    """The open websocket of a board viewer, or None when the handshake was refused."""
    return open_socket(board_path(project_id), headers)


def notification_socket(headers: list[tuple[bytes, bytes]]):
    """The caller's open notification stream, or None when the handshake was refused."""
    return open_socket(NOTIFICATIONS_PATH, headers)


async def is_accepted(project_id: int, headers: list[tuple[bytes, bytes]]) -> bool:
    async with board_socket(project_id, headers) as socket:
        return socket is not None


async def send_to_board(project_id: int, frame: dict) -> None:
    """What tickets.broadcast does after a commit."""
    await get_channel_layer().group_send(board_group(project_id), {"type": "board.frames", "frames": [frame]})


@pytest_asyncio.fixture
async def async_db_connections():
    """Close, at the end of an async test, the connections its consumers and API calls opened in the
    database thread. On PostgreSQL that hands them back to the pool: one still held there would keep
    a pooled connection out of use until the thread ends."""
    yield
    await database_sync_to_async(connections.close_all)()


@database_sync_to_async
def token_of(user) -> str:
    return issue_token(user=user)[1]


@database_sync_to_async
def session_of(user) -> str:
    """The session key of a browser logged in as `user`."""
    browser = Client()
    browser.force_login(user)
    return browser.cookies[settings.SESSION_COOKIE_NAME].value
