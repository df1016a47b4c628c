"""The limits of the Procfile's server (decisions.md, "server limits"), black box: a request head over
64 KiB is refused and its connection closed, a head must arrive within its deadline and each body step
within its own (shortened to a second here through the environment), and none of this touches an open
websocket. The counts of connections: test_connection_limits.py; a body's pace: test_body_pace.py."""

import asyncio
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import websockets

from config import workers
from tests.factories import PASSWORD

from .procfile import ProcfileServer, server_program

pytestmark = pytest.mark.skipif(not server_program().exists(), reason="the Procfile's server is not installed")

@pytest.fixture(scope="module")
def server(tmp_path_factory):
    database = tmp_path_factory.mktemp("limits") / "server.sqlite3"
    env = {"DATABASE_URL": f"sqlite:///{database}", "REDIS_URL": "", "WEB_CONCURRENCY": "1",
           "WEB_HEADERS_TIMEOUT": "1", "WEB_BODY_STEP_TIMEOUT": "1"}
    with ProcfileServer(env) as server:
        yield with_member_and_project(server)


def with_member_and_project(server: ProcfileServer) -> ProcfileServer:
    """The server's database migrated, with a member (`server.token`) of one project (`server.project`)."""
    server.manage("migrate", "--no-input")
    server.manage("createuser", "ada", "--password", PASSWORD)
    server.token = server.manage("issuetoken", "ada")
    server.project = server.post("/api/v1/projects", {"name": "Apollo", "prefix": "APL"}, server.token)["project"]
    return server


def request_head(server) -> str:
    """The head of a cheap request that answers 200, without its final blank line."""
    return f"GET /api/v1/projects HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {server.token}\r\n"


def connect(server) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=10)


def answer_of(connection: socket.socket) -> bytes:
    """What the server sends until it closes the connection or answers a whole head."""
    received = b""
    while b"\r\n\r\n" not in received and (chunk := connection.recv(65536)):
        received += chunk
    return received


def closed_after(connection: socket.socket) -> float:
    """Seconds until the server closes the connection (the rest of an answer read): a read answers
    nothing, or a reset when the server closed with bytes of ours unread."""
    started = time.monotonic()
    try:
        while connection.recv(65536):  # what is left of an answer
            pass
    except ConnectionResetError:
        pass
    return time.monotonic() - started


def is_healthy(server) -> bool:
    with connect(server) as connection:
        connection.sendall(f"{request_head(server)}\r\n".encode())
        return answer_of(connection).startswith(b"HTTP/1.1 200")


def test_a_head_over_64_kib_is_refused_and_the_worker_serves_on(server):
    with connect(server) as connection:
        connection.sendall(f"{request_head(server)}X-Padding: {'x' * 70_000}\r\n\r\n".encode())
        assert answer_of(connection).startswith(b"HTTP/1.1 400")
        assert closed_after(connection) < 1
    assert is_healthy(server)


def test_a_head_of_a_hundred_megabytes_is_cut_short(server):
    sent = 0
    with connect(server) as connection:
        connection.sendall(f"{request_head(server)}X-Padding: ".encode())
        chunk = b"x" * 65536
        try:
            for _ in range(1600):
                connection.sendall(chunk)
                sent += len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass
    assert sent < 16 * 1024 * 1024  # the refusal came after 64 KiB, plus what the sockets' buffers held
    assert is_healthy(server)


def test_a_head_just_under_the_limit_is_served(server):
    with connect(server) as connection:
        connection.sendall(f"{request_head(server)}X-Padding: {'x' * 60_000}\r\n\r\n".encode())
        assert answer_of(connection).startswith(b"HTTP/1.1 200")


def test_a_silent_connection_is_closed_at_the_head_deadline(server):
    with connect(server) as connection:
        assert 0.8 < closed_after(connection) < 3


def test_a_head_trickling_in_is_cut_at_its_deadline_whatever_arrives(server):
    with connect(server) as connection:
        started = time.monotonic()
        connection.sendall(request_head(server).encode())
        try:
            for _ in range(30):  # a header byte every 0.2 s: 6 s if nobody stopped it
                connection.sendall(b"X")
                time.sleep(0.2)
        except (BrokenPipeError, ConnectionResetError):
            pass
        assert connection.recv(65536) == b""
        assert 0.8 < time.monotonic() - started < 3


def test_the_next_head_on_a_kept_alive_connection_has_its_deadline_too(server):
    with connect(server) as connection:
        connection.sendall(f"{request_head(server)}\r\n".encode())
        head, _, body = answer_of(connection).partition(b"\r\n\r\n")
        length = int(next(line for line in head.lower().split(b"\r\n") if line.startswith(b"content-length:"))[15:])
        while len(body) < length:
            body += connection.recv(65536)
        assert head.startswith(b"HTTP/1.1 200")
        connection.sendall(request_head(server).encode())  # the next head begun, never finished
        assert 0.5 < closed_after(connection) < 3


def post_head(length: int) -> bytes:
    return (f"POST /api/v1/projects HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {length}\r\n\r\n").encode()


def test_a_stalled_body_is_cut_at_its_step_deadline(server):
    with connect(server) as connection:
        connection.sendall(post_head(100) + b'{"name":')
        assert 0.8 < closed_after(connection) < 3
    assert is_healthy(server)


def test_a_slow_but_steady_body_is_read_to_its_end(server):
    body = b'{"name": "Slow but steady"}'
    with connect(server) as connection:
        connection.sendall(post_head(len(body)))
        started = time.monotonic()
        for byte in body[:12]:  # a step every 0.25 s, 3 s in all: each step within the deadline
            connection.sendall(bytes([byte]))
            time.sleep(0.25)
        connection.sendall(body[12:])
        assert answer_of(connection).startswith(b"HTTP/1.1 401")  # read whole, then judged: no token
        assert time.monotonic() - started > 2.5


def test_open_websockets_outlive_both_deadlines(server):
    async def idle_socket() -> str:
        async with websockets.connect(f"{server.ws_url}/ws/v1/projects/{server.project['id']}/board/",
                                      additional_headers={"Authorization": f"Bearer {server.token}"},
                                      open_timeout=10) as board:
            await asyncio.sleep(2.5)
            await board.send('{"type": "ping"}')  # valid JSON: ignored
            await board.ping()
            return board.state.name

    assert asyncio.run(idle_socket()) == "OPEN"


def open_files_limits(pid: int) -> tuple[str, str]:
    line = next(line for line in Path(f"/proc/{pid}/limits").read_text().splitlines()
                if line.startswith("Max open files"))
    soft, hard = line.split()[3:5]
    return soft, hard


def test_each_worker_may_open_as_many_files_as_the_system_lets_it(server):
    [worker] = server.worker_pids()
    soft, hard = open_files_limits(worker)
    assert soft == hard


def test_the_limits_the_decisions_set():
    assert (workers.HEADERS_MAX_BYTES, workers.HEADERS_SECONDS, workers.BODY_STEP_SECONDS) == (65536, 10, 30)
    assert (workers.BODY_MIN_RATE, workers.BODY_RATE_GRACE_SECONDS, workers.BODY_SECONDS) == (1024, 10, 600)
    assert (workers.MAX_CONNECTIONS, workers.MAX_CONNECTIONS_PER_ADDRESS) == (1000, 100)
    assert {key: workers.Worker.CONFIG_KWARGS[key] for key in
            ["http", "h11_max_incomplete_event_size", "ws_max_size"]} == {
        "http": workers.GuardedH11Protocol, "h11_max_incomplete_event_size": 65536, "ws_max_size": 65536}
    assert "limit_concurrency" not in workers.Worker.CONFIG_KWARGS  # it counted websockets with requests


def test_abusive_clients_do_not_starve_the_others(tmp_path):
    """Issue 27's attack, scaled to this machine: clients sending 100 MB heads, connections trickling a
    head byte by byte and bodies held one byte short, all at once; every ordinary request is answered,
    and each abusive connection is closed by the server within its deadline."""
    env = {"DATABASE_URL": f"sqlite:///{tmp_path / 'server.sqlite3'}", "REDIS_URL": "", "WEB_CONCURRENCY": "2",
           "WEB_HEADERS_TIMEOUT": "2", "WEB_BODY_STEP_TIMEOUT": "2"}
    with ProcfileServer(env) as server:
        server.manage("migrate", "--no-input")
        server.manage("createuser", "ada", "--password", PASSWORD)
        server.token = server.manage("issuetoken", "ada")
        trickling = [connect(server) for _ in range(200)]
        stalled = [connect(server) for _ in range(100)]
        for connection in trickling:
            connection.sendall(b"GET /api/v1/projects HTTP/1.1\r\nX-Slow: ")
        for connection in stalled:
            connection.sendall(post_head(100_000) + b" " * 99_999)

        def huge_head() -> None:
            with connect(server) as connection:
                connection.sendall(request_head(server).encode() + b"X-Padding: ")
                try:
                    for _ in range(1600):
                        connection.sendall(b"x" * 65536)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        with ThreadPoolExecutor(max_workers=4) as attackers:
            attacks = [attackers.submit(huge_head) for _ in range(4)]
            started = time.monotonic()
            answers = []
            for _ in range(14):
                with connect(server) as connection:
                    connection.settimeout(5)
                    connection.sendall(f"{request_head(server)}\r\n".encode())
                    answers.append(answer_of(connection)[:12])
            for attack in attacks:
                attack.result(timeout=30)
        assert answers == [b"HTTP/1.1 200"] * 14
        assert time.monotonic() - started < 20
        for connection in trickling + stalled:
            assert closed_after(connection) < 5
            connection.close()
