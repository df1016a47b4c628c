"""X-Request-ID on every answer (decisions.md, "Operations"): the caller's own when well-formed, else a new one."""

import io
import logging
import re

import pytest

from core.request_id import RequestIdFilter
from tests.config.test_asgi_handler import asgi_get

pytestmark = pytest.mark.asyncio
GENERATED = re.compile(r"[0-9a-f]{32}")


def request_id(start: dict) -> list[str]:
    return [value.decode() for name, value in start["headers"] if name.lower() == b"x-request-id"]


@pytest.mark.parametrize("given", ["a", "trace-1.2_3", "Z" * 128, "0af7651916cd43dd8448eb211c80319c"])
@pytest.mark.parametrize("path", ["/api/v1/projects", "/api/v1/no-such-route", "/accounts/login/"])
async def test_a_well_formed_id_comes_back_unchanged(given, path):
    start, _ = await asgi_get(path, [(b"x-request-id", given.encode())])
    assert request_id(start) == [given]


@pytest.mark.parametrize("given", [b"", b"Z" * 129, b"two words", b"semi;colon", b"new\nline", "caf\u00e9".encode()])
async def test_a_malformed_id_is_replaced_by_a_new_one(given):
    start, body = await asgi_get("/api/v1/projects", [(b"x-request-id", given)])
    assert (start["status"], body) == (401, (
        b'{"error":"Authentication credentials were not provided.","code":"unauthenticated"}'))
    (replaced,) = request_id(start)
    assert GENERATED.fullmatch(replaced)


async def test_each_answer_without_an_id_gets_a_new_one(db):
    ids = [request_id((await asgi_get("/api/v1/projects"))[0]) for _ in range(2)]
    assert [len(found) for found in ids] == [1, 1]
    assert ids[0] != ids[1] and all(GENERATED.fullmatch(found) for (found,) in ids)


async def test_two_ids_in_one_request_are_replaced(db):
    start, _ = await asgi_get("/api/v1/projects", [(b"x-request-id", b"one"), (b"x-request-id", b"two")])
    assert GENERATED.fullmatch(request_id(start)[0])


@pytest.fixture
def console():
    """What the configured console handler (settings.LOGGING) writes, meanwhile."""
    (handler,) = [handler for handler in logging.getLogger().handlers
                  if any(isinstance(log_filter, RequestIdFilter) for log_filter in handler.filters)]
    written = io.StringIO()
    original = handler.setStream(written)
    yield written
    handler.setStream(original)


async def test_the_log_lines_of_a_request_name_its_id(console):
    await asgi_get("/api/v1/no-such-route", [(b"x-request-id", b"trace-42")])
    await asgi_get("/api/v1/other-route")
    lines = [line for line in console.getvalue().splitlines() if "django.request" in line]
    assert len(lines) == 2
    assert lines[0].endswith("WARNING django.request [trace-42] Not Found: /api/v1/no-such-route")
    assert re.search(r"WARNING django.request \[[0-9a-f]{32}\] Not Found: /api/v1/other-route$", lines[1])
