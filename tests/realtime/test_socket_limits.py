"""Open websockets per user (WS_MAX_PER_USER) and per server process (WEB_MAX_WEBSOCKETS), decisions.md
"availability limits": a handshake beyond the user's limit is refused with 429 and the API's JSON where the
server answers handshakes (uvicorn), else accepted and closed at once with 4429; a closed socket gives its room
back; board and notification sockets count alike, each user apart. With REDIS_URL the count is shared by every
process through leases in Redis, which end by themselves when a process dies."""

import asyncio
import json
import os
import time
from contextlib import AsyncExitStack

import pytest
from channels.testing import WebsocketCommunicator

from accounts.websocket import TOO_MANY_SOCKETS_CODE
from config.application import application
from core import sockets
from core.cache import cache_key, redis_client

from .conftest import ASYNC_DB_TESTS, NOTIFICATIONS_PATH, bearer, board_path, open_socket, token_of

pytestmark = ASYNC_DB_TESTS

HTTP_ANSWERS = {"websocket.http.response": {}}


@pytest.fixture(autouse=True)
def small_limits(settings):
    settings.WS_MAX_PER_USER = 2


async def opened(stack: AsyncExitStack, path: str, token: str):
    return await stack.enter_async_context(open_socket(path, bearer(token)))


async def refusal(path: str, token: str, extensions=None):
    """How the server refuses a handshake: (status, headers, JSON body) when it may answer HTTP, else
    ("accept", close code) or "close" (HTTP 403)."""
    communicator = WebsocketCommunicator(application, path, headers=bearer(token))
    if extensions is not None:
        communicator.scope["extensions"] = extensions
    await communicator.send_input({"type": "websocket.connect"})
    answer = await communicator.receive_output(timeout=2)
    if answer["type"] == "websocket.http.response.start":
        body = await communicator.receive_output(timeout=2)
        result = (answer["status"], dict(answer["headers"]), json.loads(body["body"]))
    elif answer["type"] == "websocket.accept":
        result = ("accept", (await communicator.receive_output(timeout=2)).get("code"))
    else:
        result = "close"
    await communicator.disconnect()
    return result


async def test_a_handshake_over_the_user_s_limit_is_refused_with_429(project, viewer):
    token = await token_of(viewer)
    async with AsyncExitStack() as stack:
        assert await opened(stack, board_path(project.id), token) is not None
        assert await opened(stack, NOTIFICATIONS_PATH, token) is not None  # every kind of socket counts
        assert await refusal(board_path(project.id), token, HTTP_ANSWERS) == (
            429, {b"content-type": b"application/json"},
            {"error": "too many open websockets: at most 2 per user", "code": "rate_limited"})
        assert await refusal(board_path(project.id), token) == ("accept", TOO_MANY_SOCKETS_CODE)  # daphne


async def test_a_closed_socket_gives_its_room_back(project, viewer):
    token = await token_of(viewer)
    async with AsyncExitStack() as stack:
        await opened(stack, board_path(project.id), token)
        async with open_socket(board_path(project.id), bearer(token)) as second:
            assert second is not None
        assert await opened(stack, board_path(project.id), token) is not None


async def test_each_user_has_a_limit_of_their_own(project, viewer, editor):
    async with AsyncExitStack() as stack:
        for _ in range(2):
            await opened(stack, board_path(project.id), await token_of(viewer))
        assert await opened(stack, board_path(project.id), await token_of(editor)) is not None


async def test_a_refused_handshake_holds_no_room(project, viewer, outsider):
    token = await token_of(outsider)
    for _ in range(3):  # not a member: refused by the consumer, after the count
        assert await refusal(board_path(project.id), token) == "close"
    async with AsyncExitStack() as stack:
        assert await opened(stack, NOTIFICATIONS_PATH, token) is not None
        assert await opened(stack, NOTIFICATIONS_PATH, token) is not None


async def test_a_server_process_holds_at_most_its_websockets(project, viewer, editor, settings):
    settings.WEB_MAX_WEBSOCKETS = 1
    async with AsyncExitStack() as stack:
        await opened(stack, board_path(project.id), await token_of(viewer))
        status, headers, body = await refusal(board_path(project.id), await token_of(editor), HTTP_ANSWERS)
        assert (status, headers[b"retry-after"], body) == (
            503, b"1", {"error": "the service is busy, try again shortly", "code": "unavailable"})


async def test_redis_out_of_reach_refuses_with_503(project, viewer, refused_redis):
    assert (await refusal(NOTIFICATIONS_PATH, await token_of(viewer), HTTP_ANSWERS))[0] == 503


@pytest.mark.redis
@pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs Redis (REDIS_URL)")
async def test_the_leases_of_a_process_that_died_end_by_themselves(project, viewer, settings):
    token = await token_of(viewer)
    gone = time.time() - 1  # the leases of sockets whose process stopped renewing them
    redis = redis_client()
    redis.zadd(cache_key(f"sockets:user:{viewer.pk}"), {"dead-1": gone, "dead-2": gone})
    async with AsyncExitStack() as stack:
        assert await opened(stack, NOTIFICATIONS_PATH, token) is not None
        assert redis.zcard(cache_key(f"sockets:user:{viewer.pk}")) == 1


@pytest.mark.redis
@pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs Redis (REDIS_URL)")
async def test_open_sockets_renew_their_leases(project, viewer, monkeypatch):
    monkeypatch.setattr(sockets, "LEASE_RENEW_SECONDS", 0.05)
    token = await token_of(viewer)
    key = cache_key(f"sockets:user:{viewer.pk}")
    redis = redis_client()
    async with AsyncExitStack() as stack:
        await opened(stack, NOTIFICATIONS_PATH, token)
        [(_, first_end)] = redis.zrange(key, 0, -1, withscores=True)
        deadline = time.monotonic() + 5
        while redis.zrange(key, 0, -1, withscores=True)[0][1] == first_end and time.monotonic() < deadline:
            await asyncio.sleep(0.05)  # the renewal runs on this loop
        assert redis.zrange(key, 0, -1, withscores=True)[0][1] > first_end
    assert redis.zcard(key) == 0
