"""Websocket handshakes count against the API's rate limits, as requests do: one whose token (or session)
authenticates against that credential and its user, any other against its client address, so a flood
of random-token handshakes is refused after the address's limit and leaves one counter, not a key per
token. Over a limit, a server that lets the application answer a handshake (uvicorn) sends 429 with
Retry-After; others refuse it as every handshake (HTTP 403)."""

import os
import time

import pytest
from channels.testing import WebsocketCommunicator

from config.application import application
from tests.security.test_rate_limits import cache_keys

from .conftest import ASYNC_DB_TESTS, bearer, board_path, token_of

pytestmark = ASYNC_DB_TESTS

HTTP_ANSWERS = {"websocket.http.response": {}}


@pytest.fixture(autouse=True)
def small_limits(settings, monkeypatch):
    settings.API_ANON_RATE_LIMIT_PER_MINUTE = 3
    settings.API_RATE_LIMIT_PER_MINUTE = 2
    settings.API_USER_RATE_LIMIT_PER_MINUTE = 100
    monkeypatch.setattr(time, "time", lambda: 1_800_000_030.0)  # no test straddles the turn of a minute


async def handshake(path: str, headers, client=("10.1.2.3", 50000), extensions=HTTP_ANSWERS):
    """The server's first answer to a handshake: "accept", "close" (HTTP 403), or the status it answers."""
    communicator = WebsocketCommunicator(application, path, headers=headers)
    communicator.scope.update(client=client, extensions=extensions)
    await communicator.send_input({"type": "websocket.connect"})
    answer = await communicator.receive_output(timeout=2)
    if answer["type"] == "websocket.http.response.start":
        body = await communicator.receive_output(timeout=2)
        result = (answer["status"], dict(answer["headers"]), body["body"])
    else:
        result = answer["type"].removeprefix("websocket.")
    await communicator.disconnect()
    return result


def random_token() -> list[tuple[bytes, bytes]]:
    return bearer(os.urandom(32).hex())


async def test_random_token_handshakes_count_against_their_address(project):
    path = board_path(project.id)
    answers = [await handshake(path, random_token()) for _ in range(4)]
    assert answers[:3] == ["close"] * 3
    status, headers, body = answers[3]
    assert (status, body) == (429, b'{"error": "rate limit exceeded", "code": "rate_limited"}')
    assert (headers[b"retry-after"], headers[b"x-ratelimit-limit"], headers[b"x-ratelimit-remaining"]) == (
        b"30", b"3", b"0")
    assert await handshake(path, random_token(), client=("10.9.9.9", 1)) == "close"  # another address


async def test_a_flood_of_random_tokens_leaves_one_counter(project):
    for _ in range(20):
        await handshake(board_path(project.id), random_token())
    assert len(cache_keys()) == 1


async def test_handshakes_without_any_credential_count_too(project):
    answers = [await handshake("/ws/v1/notifications/", []) for _ in range(4)]
    assert answers[:3] == ["close"] * 3 and answers[3][0] == 429


async def test_a_valid_token_counts_against_itself_not_its_address(project, viewer, outsider):
    path, plain = board_path(project.id), await token_of(viewer)
    assert [await handshake(path, bearer(plain)) for _ in range(2)] == ["accept", "accept"]
    assert (await handshake(path, bearer(plain)))[0] == 429
    assert await handshake(path, bearer(await token_of(viewer))) == "accept"  # the user's other token
    assert await handshake(path, random_token()) == "close"  # the address's own count is untouched


async def test_without_http_answers_the_server_refuses_as_ever(project, viewer):
    path, plain = board_path(project.id), await token_of(viewer)
    for _ in range(2):
        await handshake(path, bearer(plain), extensions={})
    assert await handshake(path, bearer(plain), extensions={}) == "close"


async def test_a_websocket_handshake_is_answered_503_when_redis_refuses(project, refused_redis):
    status, headers, body = await handshake(f"/ws/v1/projects/{project.id}/board/", [])
    assert (status, headers[b"retry-after"], body) == (
        503, b"1", b'{"error": "the service is busy, try again shortly", "code": "unavailable"}')
