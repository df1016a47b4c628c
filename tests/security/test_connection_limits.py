"""The connection counts of the Procfile's server (decisions.md, "availability limits"), black box, on one
worker with small limits set through the environment: at most WEB_MAX_CONNECTIONS_PER_ADDRESS HTTP connections
from one client address (429 beyond, as JSON), the trusted proxies excepted; at most WEB_MAX_CONNECTIONS in all
(503 beyond, as JSON); websockets counted apart, so that they never take the room of requests. Client addresses
are loopback ones of their own (127.0.0.0/8); 127.0.0.1 is a trusted proxy (gunicorn's default
FORWARDED_ALLOW_IPS)."""

import asyncio
import json
import socket
from contextlib import ExitStack

import pytest
import websockets
from websockets.exceptions import InvalidStatus

from tests.polling import eventually

from .procfile import ProcfileServer, server_program
from .test_server_limits import answer_of, closed_after, with_member_and_project

pytestmark = pytest.mark.skipif(not server_program().exists(), reason="the Procfile's server is not installed")

PER_ADDRESS = 4
IN_ALL = 12


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    database = tmp_path_factory.mktemp("connections") / "server.sqlite3"
    env = {"DATABASE_URL": f"sqlite:///{database}", "REDIS_URL": "", "WEB_CONCURRENCY": "1",
           "WEB_MAX_CONNECTIONS": str(IN_ALL), "WEB_MAX_CONNECTIONS_PER_ADDRESS": str(PER_ADDRESS),
           "API_RATE_LIMIT_PER_MINUTE": "100000", "API_ANON_RATE_LIMIT_PER_MINUTE": "100000"}
    with ProcfileServer(env) as server:
        yield with_member_and_project(server)


def connect(server, source: str) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=10, source_address=(source, 0))


def held(server, source: str, count: int, stack: ExitStack) -> list[socket.socket]:
    """`count` connections from `source` that send nothing (held until the head's deadline, 10 s)."""
    return [stack.enter_context(connect(server, source)) for _ in range(count)]


def answer(server, source: str) -> tuple[int, dict, dict]:
    """A cheap request on a connection of its own: status, headers and JSON body."""
    with connect(server, source) as connection:
        connection.sendall(f"GET /api/v1/projects HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                           f"Authorization: Bearer {server.token}\r\n\r\n".encode())
        head, _, body = answer_of(connection).partition(b"\r\n\r\n")
        lines = head.decode().split("\r\n")
        headers = dict(line.lower().split(": ", 1) for line in lines[1:])
        while len(body) < int(headers["content-length"]):
            body += connection.recv(65536)
        return int(lines[0].split()[1]), headers, json.loads(body)


def served(server, source: str) -> bool:
    return answer(server, source)[0] == 200


def test_connections_over_an_address_s_limit_are_refused_with_429_and_closed(server):
    with ExitStack() as stack:
        held(server, "127.0.0.2", PER_ADDRESS, stack)
        status, headers, body = eventually(lambda: (refused := answer(server, "127.0.0.2"))[0] == 429 and refused)
        assert (status, body) == (429, {"error": "too many connections from your address", "code": "rate_limited"})
        assert (headers["content-type"], headers["retry-after"], headers["connection"]) == (
            "application/json", "1", "close")
        assert served(server, "127.0.0.3")  # another address: served as ever
    assert eventually(lambda: served(server, "127.0.0.2"), seconds=5)  # room again once they are closed


def test_a_refused_connection_that_sends_nothing_is_closed_within_a_second(server):
    with ExitStack() as stack:
        held(server, "127.0.0.4", PER_ADDRESS, stack)
        assert eventually(lambda: answer(server, "127.0.0.4")[0] == 429)
        with connect(server, "127.0.0.4") as silent:
            assert closed_after(silent) < 2


def test_a_trusted_proxy_s_connections_are_not_limited_per_address(server):
    with ExitStack() as stack:
        held(server, "127.0.0.1", PER_ADDRESS + 2, stack)
        assert served(server, "127.0.0.1")


def test_a_full_worker_answers_503_as_json(server):
    with ExitStack() as stack:
        for index in range(IN_ALL // 3):  # three from each of four addresses: none over its own limit
            held(server, f"127.0.1.{index + 1}", 3, stack)
        status, headers, body = eventually(lambda: (refused := answer(server, "127.0.1.99"))[0] == 503 and refused)
        assert (status, headers["retry-after"], body) == (
            503, "1", {"error": "the service is busy, try again shortly", "code": "unavailable"})
    assert eventually(lambda: served(server, "127.0.1.99"), seconds=5)


def test_websockets_are_counted_apart_and_never_take_the_room_of_requests(server):
    url = f"{server.ws_url}/ws/v1/projects/{server.project['id']}/board/"

    async def requests_beside_open_sockets() -> list[int]:
        boards = [await websockets.connect(url, additional_headers={"Authorization": f"Bearer {server.token}"},
                                           open_timeout=10) for _ in range(IN_ALL + 2)]
        try:  # more sockets than the worker takes HTTP connections; some from an address over its own limit
            return [status for status, _, _ in await asyncio.gather(
                *(asyncio.to_thread(answer, server, f"127.0.2.{index + 1}") for index in range(3)))]
        finally:
            await asyncio.gather(*(board.close() for board in boards))

    assert asyncio.run(requests_beside_open_sockets()) == [200, 200, 200]


def test_a_refused_connection_s_websocket_handshake_gets_the_refusal(server):
    async def handshake_over_the_limit() -> InvalidStatus:
        with pytest.raises(InvalidStatus) as refused:
            await websockets.connect(f"{server.ws_url}/ws/v1/projects/{server.project['id']}/board/",
                                     additional_headers={"Authorization": f"Bearer {server.token}"},
                                     open_timeout=10, local_addr=("127.0.0.5", 0))
        return refused.value

    with ExitStack() as stack:
        held(server, "127.0.0.5", PER_ADDRESS, stack)
        assert eventually(lambda: answer(server, "127.0.0.5")[0] == 429)  # the worker has accepted them
        response = asyncio.run(handshake_over_the_limit()).response
    assert (response.status_code, json.loads(response.body)) == (
        429, {"error": "too many connections from your address", "code": "rate_limited"})
