"""The Procfile's server, black box: it serves the API and the board socket, and refuses oversized bodies
with a JSON 413 before reading them, by Content-Length and while a chunked body streams in."""

import asyncio
import json
import select
import socket
import time
import urllib.request

import pytest
import websockets

from tests.factories import PASSWORD

from .procfile import ProcfileServer, server_program

pytestmark = pytest.mark.skipif(not server_program().exists(), reason="the Procfile's server is not installed")

HUNDRED_MB = 100 * 1024 * 1024


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    database = tmp_path_factory.mktemp("procfile") / "server.sqlite3"
    spool = tmp_path_factory.mktemp("spool")  # where the server's uploads would be spooled (tempfile's TMPDIR)
    env = {"DATABASE_URL": f"sqlite:///{database}", "REDIS_URL": "", "WEB_CONCURRENCY": "1", "TMPDIR": str(spool),
           # The workers' metrics files stay open for their life: elsewhere than the spool.
           "PROMETHEUS_MULTIPROC_DIR": str(tmp_path_factory.mktemp("metrics"))}
    with ProcfileServer(env) as server:
        server.spool = spool
        server.manage("migrate", "--no-input")
        server.manage("createuser", "ada", "--name", "Ada Lovelace", "--password", PASSWORD)
        server.token = server.manage("issuetoken", "ada")
        yield server


def raw_exchange(server, head: str, body_chunks=(), deadline: float = 10) -> tuple[bytes, int]:
    """Sends a request head, then body chunks until the server answers; the answer, and how many body
    bytes went out before it began."""
    sent, answer = 0, b""
    with socket.create_connection(("127.0.0.1", server.port), timeout=deadline) as connection:
        connection.sendall(head.encode())
        # poll, not select: a long test run may hold more than select's 1024 descriptors.
        readable = select.poll()
        readable.register(connection, select.POLLIN)
        chunks = iter(body_chunks)
        give_up = time.monotonic() + deadline
        while time.monotonic() < give_up and not answer:
            if readable.poll(0):
                answer = connection.recv(65536)
            elif (chunk := next(chunks, None)) is not None:
                connection.sendall(chunk)
                sent += len(chunk)
            else:
                readable.poll(max(0, give_up - time.monotonic()) * 1000)
        while answer and not complete(answer):
            answer += connection.recv(65536)
        return answer, sent


def complete(answer: bytes) -> bool:
    head, separator, body = answer.partition(b"\r\n\r\n")
    length = next((int(line.split(b":")[1]) for line in head.lower().split(b"\r\n")
                   if line.startswith(b"content-length:")), None)
    return bool(separator) and length is not None and len(body) >= length


def status_and_json(answer: bytes) -> tuple[int, dict, bytes]:
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body), head.lower()


def test_the_api_answers(server):
    project = server.post("/api/v1/projects", {"name": "Apollo", "prefix": "APL"}, server.token)["project"]
    request = urllib.request.Request(f"{server.url}/api/v1/projects",
                                     headers={"Authorization": f"Bearer {server.token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 200
        assert [item["id"] for item in json.load(response)["projects"]] == [project["id"]]
        assert response.headers["X-RateLimit-Limit"] == "1200"


def test_the_board_socket_opens_without_compression(server):
    project = server.post("/api/v1/projects", {"name": "Gemini", "prefix": "GEM"}, server.token)["project"]

    async def handshake():
        # The client offers permessage-deflate, as browsers do; the server declines it (config/workers.py).
        async with websockets.connect(f"{server.ws_url}/ws/v1/projects/{project['id']}/board/",
                                      additional_headers={"Authorization": f"Bearer {server.token}"},
                                      open_timeout=10) as socket:
            return socket.state.name, socket.response.headers.get("Sec-WebSocket-Extensions")

    assert asyncio.run(handshake()) == ("OPEN", None)


@pytest.mark.parametrize("path", ["/api/v1/projects", "/api/v1/projects/1/tickets/1/attachments"])
def test_a_hundred_megabytes_without_a_token_are_refused_before_a_byte_is_sent(server, path):
    head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            "Content-Type: multipart/form-data; boundary=x\r\n"
            f"Content-Length: {HUNDRED_MB}\r\n\r\n")
    started = time.monotonic()
    answer, sent = raw_exchange(server, head)
    status, body, headers = status_and_json(answer)
    assert (status, sent) == (413, 0)
    assert body["error"].startswith("request body too large")
    assert b"content-type: application/json" in headers
    assert b"x-content-type-options: nosniff" in headers
    assert time.monotonic() - started < 2


def test_a_chunked_body_is_cut_at_the_limit(server):
    head = ("POST /api/v1/projects HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            "Transfer-Encoding: chunked\r\n\r\n")
    chunk = b"10000\r\n" + b" " * 0x10000 + b"\r\n"  # 64 KiB of JSON whitespace
    answer, sent = raw_exchange(server, head, [chunk] * 1600)  # 100 MB if nobody stopped it
    status, body, _ = status_and_json(answer)
    assert status == 413
    assert body["error"].startswith("request body too large")
    assert sent < 20 * 1024 * 1024  # the limit (2 MB) and what the sockets' buffers held meanwhile


def test_stalled_uploads_to_an_unreachable_ticket_spool_nothing(server):
    """Issue 27, item 4: ten connections with a valid token each announce 200 MB of files for a ticket
    the token cannot reach, send 3 MB of it and stall: each is refused before a byte of its body is read,
    and the worker holds no spooled body for any of them (Django spools a body over 2.5 MB to an unnamed
    temporary file in TMPDIR: the worker's open files would show it)."""
    head = (f"POST /api/v1/tickets/999999/attachments HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Authorization: Bearer {server.token}\r\nContent-Type: multipart/form-data; boundary=x\r\n"
            f"Content-Length: {200 * 1024 * 1024}\r\n\r\n").encode()
    connections = [socket.create_connection(("127.0.0.1", server.port), timeout=10) for _ in range(10)]
    try:
        for connection in connections:
            try:
                connection.sendall(head + b"x" * (3 * 1024 * 1024))  # the start of a body, then nothing
            except ConnectionResetError:
                pass  # refused while it sent
        answers = [status_and_json(read_answer(connection)) for connection in connections]
        assert [(status, body["error"].startswith("request body too large")) for status, body, _ in answers] == [
            (413, True)] * 10
        assert server.open_files(server.spool) == []
    finally:
        for connection in connections:
            connection.close()


def read_answer(connection: socket.socket) -> bytes:
    answer = b""
    while not complete(answer):
        answer += connection.recv(65536)
    return answer
