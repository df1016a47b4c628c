"""Issue 36's attacks on availability, replayed on the running service: the Procfile's server (two workers,
PostgreSQL with a small pool, Redis), each attack scaled to this machine, with ordinary requests measured
beside it from another address. Every ordinary request must be answered 200, and every refusal the attacker
meets is the API's JSON or the login's page, never a 500. Timings are measured, and only bounded loosely here:
bench/availability.py measures the ratios. Clients come from loopback addresses of their own (127.0.0.0/8;
127.0.0.1 is a trusted proxy, not counted per address)."""

import asyncio
import json
import os
import socket
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack

import pytest
import websockets
from websockets.exceptions import InvalidStatus

from accounts.services import issue_token
from tests.factories import AttachmentFactory, TicketFactory
from tests.polling import eventually
from tests.realtime.conftest import SEVERAL_PROCESSES
from tests.realtime.servers import Beside, served_database_url
from tests.security.procfile import ProcfileServer

from .test_abuse import an_address, call, early_in_a_minute, login_post

pytestmark = SEVERAL_PROCESSES

BODY_GRACE, BODY_TOTAL = 2, 6  # seconds: the defaults are 10 and 600


@pytest.fixture(scope="module")
def server(tmp_path_factory, django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        database_url = served_database_url()
    temporary = tmp_path_factory.mktemp("server-tmp")
    env = {"DATABASE_URL": database_url, "REDIS_URL": os.environ["REDIS_URL"], "WEB_CONCURRENCY": "2",
           "DATABASE_POOL_MIN_SIZE": "1", "DATABASE_POOL_MAX_SIZE": "3", "DATABASE_POOL_TIMEOUT": "3",
           "WEB_BODY_RATE_GRACE": str(BODY_GRACE), "WEB_BODY_TIMEOUT": str(BODY_TOTAL),
           "MEDIA_ROOT": str(tmp_path_factory.mktemp("media")), "TMPDIR": str(temporary),
           "PROMETHEUS_MULTIPROC_DIR": str(tmp_path_factory.mktemp("metrics")),  # not among the uploads' files
           "STATIC_ROOT": str(tmp_path_factory.mktemp("static"))}
    server = ProcfileServer(env)
    server.manage("collectstatic", "--no-input")  # the login page's, as in production
    with server:
        assert server.workers_serving(2)
        server.temporary = temporary
        yield server


@pytest.fixture
def beside(server, project, manager):
    return Beside(server.url, issue_token(user=manager)[1], an_address())


# ---- 1. one account's websockets

def test_one_account_s_sockets_stop_at_its_limit_and_requests_beside_them_are_served(server, project, viewer,
                                                                                    beside):
    token = issue_token(user=viewer)[1]

    async def open_sockets() -> tuple[int, list]:
        opened, refused = [], []
        for _ in range(25):
            try:
                opened.append(await websockets.connect(f"{server.ws_url}/ws/v1/notifications/", open_timeout=10,
                                                       additional_headers={"Authorization": f"Bearer {token}"}))
            except InvalidStatus as refusal:
                refused.append((refusal.response.status_code, json.loads(refusal.response.body)))
        await asyncio.gather(*(socket.close() for socket in opened))
        return len(opened), refused

    with beside:
        opened, refused = asyncio.run(open_sockets())
    assert (opened, refused) == (20, [(429, {"error": "too many open websockets: at most 20 per user",
                                             "code": "rate_limited"})] * 5)  # the two workers count together
    assert beside.answers and beside.statuses() == {200}


# ---- 2. one address's slow connections, reopened

def closed_by_server(connection: socket.socket) -> bool:
    """Whether the server has closed this connection (nothing is read from it, and nothing waited for)."""
    connection.setblocking(False)
    try:
        return connection.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def test_an_address_s_slow_connections_take_no_room_from_other_addresses(server, beside):
    attacker = an_address()

    def slow(stack: ExitStack) -> socket.socket:
        connection = stack.enter_context(socket.create_connection(("127.0.0.1", server.port), timeout=5,
                                                                  source_address=(attacker, 0)))
        connection.sendall(b"GET /api/v1/projects HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        return connection

    with ExitStack() as stack, beside:
        connections = [slow(stack) for _ in range(300)]
        refused, deadline = 0, time.monotonic() + 8
        while refused < 300 and time.monotonic() < deadline:  # the attacker reopens what the server closes
            time.sleep(0.5)
            for index, connection in enumerate(connections):
                if closed_by_server(connection):
                    refused += 1
                    connections[index] = slow(stack)
    # 100 per worker are admitted (held until their head's deadline, 10 s), the rest refused within a second
    assert refused >= 300
    assert beside.answers and beside.statuses() == {200}


# ---- 3. bodies trickled, and an upload held short of its end

def test_trickled_bodies_are_closed_and_hold_no_temporary_file(server, project, manager, beside):
    ticket = TicketFactory(project=project, created_by=manager)
    token = issue_token(user=manager)[1]
    attacker = an_address()
    with ExitStack() as stack:
        def connect() -> socket.socket:
            return stack.enter_context(socket.create_connection(("127.0.0.1", server.port), timeout=10,
                                                                source_address=(attacker, 0)))

        trickling = [connect() for _ in range(40)]
        started = time.monotonic()
        for connection in trickling:
            connection.sendall(b"POST /api/v1/projects HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                               b"Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n")
        upload = connect()
        upload.sendall(f"POST /api/v1/tickets/{ticket.id}/attachments HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                       f"Authorization: Bearer {token}\r\nContent-Type: multipart/form-data; boundary=x\r\n"
                       f"Content-Length: {8 * 1024 * 1024}\r\n\r\n".encode()
                       + b"--x\r\nContent-Disposition: form-data; name=\"files[]\"; filename=\"big.txt\"\r\n\r\n"
                       + b"x" * (6 * 1024 * 1024))  # the permitted uploader's body, fast until 2 MiB short
        upload_sent = time.monotonic() - started
        closed_at = {}
        with beside:
            while len(closed_at) < len(trickling) + 1 and time.monotonic() - started < BODY_TOTAL + 4:
                for connection in [*trickling, upload]:
                    if connection in closed_at:
                        continue
                    if closed_by_server(connection):
                        closed_at[connection] = time.monotonic() - started
                    elif connection is not upload:
                        connection.sendall(b" ")  # a byte a second each: far below 1 KiB/s
                time.sleep(1)
    trickled_for = sorted(closed_at.get(connection, 99) for connection in trickling)
    assert BODY_GRACE <= trickled_for[0] and trickled_for[-1] < BODY_GRACE + 3, trickled_for
    assert BODY_TOTAL - 1 <= closed_at.get(upload, 99) - upload_sent < BODY_TOTAL + 3
    # the upload's spooled body went with its connection
    assert eventually(lambda: server.open_files(server.temporary) == [], seconds=5)
    assert beside.answers and beside.statuses() == {200}


# ---- 4. a login flood from many addresses

def test_a_login_flood_from_40_addresses_neither_holds_the_pool_nor_fails(server, beside):
    alone = [beside.one() for _ in range(10)]
    with beside, ThreadPoolExecutor(max_workers=12) as flood:
        run = an_address()  # usernames of this run's own: each is named once
        logins = list(flood.map(lambda index: login_post(server, f"flood{index}@{run}", "guess", an_address())[0],
                                range(40)))
    assert set(logins) <= {200, 429} and logins.count(200) >= 8  # checked (and failed), or no turn in time
    assert beside.answers and beside.statuses() == {200}  # with 3 pooled connections and 12 logins at once
    print(f"API p50 {statistics.median(seconds for _, seconds in alone) * 1000:.0f} ms alone, "
          f"{beside.p50_ms():.0f} ms beside the flood; logins {sorted(logins)}")


def test_logins_naming_one_username_are_limited_across_addresses(server):
    username = f"target-{an_address()}"
    early_in_a_minute()
    answers = [login_post(server, username, "guess", an_address()) for _ in range(12)]
    assert [status for status, _, _ in answers] == [200] * 10 + [429] * 2
    assert b"Too many login attempts for this username" in answers[-1][2]


# ---- 5. a bucket that hangs, then refuses

@pytest.fixture(scope="module")
def bucket_server(tmp_path_factory, django_db_setup, django_db_blocker):
    """The Procfile's server (one worker, a pool of 2) whose bucket accepts connections and never answers
    (a listening socket never accepted from); `refuse()` then closes it: the same port refuses."""
    with django_db_blocker.unblock():
        database_url = served_database_url()
    listener = socket.create_server(("127.0.0.1", 0), backlog=128)
    env = {"DATABASE_URL": database_url, "REDIS_URL": os.environ["REDIS_URL"], "WEB_CONCURRENCY": "1",
           "DATABASE_POOL_MIN_SIZE": "1", "DATABASE_POOL_MAX_SIZE": "2", "DATABASE_POOL_TIMEOUT": "3",
           "AWS_STORAGE_BUCKET_NAME": "tracker-hung", "AWS_S3_ENDPOINT_URL": f"http://127.0.0.1:{listener.getsockname()[1]}",
           "AWS_ACCESS_KEY_ID": "tracker-tests", "AWS_SECRET_ACCESS_KEY": "tracker-tests-secret",
           "AWS_S3_REGION_NAME": "us-east-1", "AWS_S3_CONNECT_TIMEOUT": "1", "AWS_S3_READ_TIMEOUT": "2"}
    with listener, ProcfileServer(env) as server:
        assert server.workers_serving(1)
        server.refuse = listener.close
        yield server


OUT_OF_REACH = {"error": "the file storage is out of reach, try again shortly", "code": "unavailable"}


def test_downloads_from_a_hung_bucket_answer_503_and_hold_no_database_connection(bucket_server, project, manager):
    attachments = [AttachmentFactory(ticket=TicketFactory(project=project, created_by=manager)) for _ in range(6)]
    headers = {"Authorization": f"Bearer {issue_token(user=manager)[1]}"}
    beside = Beside(bucket_server.url, headers["Authorization"].removeprefix("Bearer "), an_address())
    with ThreadPoolExecutor(max_workers=6) as downloads, beside:
        started = time.monotonic()
        answers = list(downloads.map(
            lambda attachment: call(bucket_server, "GET", f"/api/v1/attachments/{attachment.id}", headers=headers),
            attachments))
        took = time.monotonic() - started
    assert [(status, headers["retry-after"], json.loads(body)) for status, headers, body in answers] == [
        (503, "1", OUT_OF_REACH)] * 6
    assert took < 2 * (1 + 2) + 4  # two attempts of a connect and a read, the back-off, the server's share
    # six downloads waited on the bucket with two pooled connections: every ordinary request was served
    assert beside.answers and beside.statuses() == {200}

    bucket_server.refuse()
    started = time.monotonic()
    status, headers, body = call(bucket_server, "GET", f"/api/v1/attachments/{attachments[0].id}", headers=headers)
    assert (status, headers["retry-after"], json.loads(body)) == (503, "1", OUT_OF_REACH)
    assert time.monotonic() - started < 3
