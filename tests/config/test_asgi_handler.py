"""HTTP through the ASGI application as a server calls it: Django's middleware and our views as one
synchronous stack, entered once from the event loop (config/handler.py)."""

import asyncio
import json
import threading

import pytest
from asgiref.sync import AsyncToSync
from channels.db import database_sync_to_async
from django.db import connection, connections

from accounts.services import issue_token
from config.application import application, django_asgi_app
from projects.views import ProjectCollectionViewSet


def http_scope(path: str, headers: list[tuple[bytes, bytes]] = (), method: str = "GET") -> dict:
    return {"type": "http", "http_version": "1.1", "method": method, "path": path, "raw_path": path.encode(),
            "query_string": b"", "root_path": "", "scheme": "https", "headers": [(b"host", b"testserver"), *headers],
            "client": ("127.0.0.1", 40000), "server": ("testserver", 443)}


async def asgi_get(path: str, headers: list[tuple[bytes, bytes]] = (), method: str = "GET") -> tuple[dict, bytes]:
    requests = [{"type": "http.request", "body": b"", "more_body": False}]
    sent = []

    async def receive():
        if requests:
            return requests.pop()
        await asyncio.Future()  # the client stays: Django's watch for a disconnect is cancelled after the answer

    async def send(message):
        sent.append(message)

    await application(http_scope(path, headers, method), receive, send)
    start = next(message for message in sent if message["type"] == "http.response.start")
    return start, b"".join(message.get("body", b"") for message in sent if message["type"] == "http.response.body")


@pytest.fixture
def hops_to_the_loop(monkeypatch):
    """Every time synchronous code hands work back to the event loop, the thread it did so from."""
    threads = []
    original = AsyncToSync.__call__

    def counted(self, *args, **kwargs):
        threads.append(threading.get_ident())
        return original(self, *args, **kwargs)

    monkeypatch.setattr(AsyncToSync, "__call__", counted)
    return threads


@pytest.fixture
def view_threads(monkeypatch):
    threads = []
    original = ProjectCollectionViewSet.list

    def recorded(self, request):
        threads.append(threading.get_ident())
        return original(self, request)

    monkeypatch.setattr(ProjectCollectionViewSet, "list", recorded)
    return threads


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_request_runs_its_middleware_and_view_without_going_back_to_the_loop(
        manager, hops_to_the_loop, view_threads):
    _, plain = await database_sync_to_async(issue_token)(user=manager)
    start, body = await asgi_get("/api/v1/projects", [(b"authorization", f"Bearer {plain}".encode())])

    assert start["status"] == 200
    assert [project["name"] for project in json.loads(body)["projects"]] == ["Apollo"]
    headers = {key.lower(): value for key, value in start["headers"]}
    assert (headers[b"content-type"], headers[b"x-content-type-options"]) == (b"application/json", b"nosniff")
    assert b"x-ratelimit-remaining" in headers  # the middleware ran around the view
    assert len(view_threads) == 1 and view_threads[0] != threading.get_ident()
    assert hops_to_the_loop == []


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_errors_are_still_answered_by_the_stack(hops_to_the_loop):
    start, body = await asgi_get("/api/v1/projects")
    assert start["status"] == 401 and "error" in json.loads(body)
    start, body = await asgi_get("/api/v1/no-such-thing")
    assert start["status"] == 404 and "error" in json.loads(body)
    assert hops_to_the_loop == []


@pytest.fixture
def token_header(manager):
    return [(b"authorization", f"Bearer {issue_token(user=manager)[1]}".encode())]


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_one_request_after_another_runs_in_the_same_kept_thread(token_header, view_threads):
    for _ in range(3):
        start, _ = await asgi_get("/api/v1/projects", token_header)
        assert start["status"] == 200
    assert len(set(view_threads)) == 1 and view_threads[0] != threading.get_ident()


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_requests_at_once_never_share_a_thread(monkeypatch, token_header, view_threads):
    all_in = threading.Barrier(3, timeout=10)  # three views in at once, or they time out (a 500)
    original = ProjectCollectionViewSet.list

    def meeting(self, request):
        all_in.wait()
        return original(self, request)

    monkeypatch.setattr(ProjectCollectionViewSet, "list", meeting)
    answers = await asyncio.gather(*(asgi_get("/api/v1/projects", token_header) for _ in range(3)))
    assert [start["status"] for start, _ in answers] == [200, 200, 200]
    assert len(set(view_threads)) == 3


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_request_whose_client_left_gives_its_thread_back_once_its_view_has_run(
        monkeypatch, token_header, view_threads):
    started, release = threading.Event(), threading.Event()
    original = ProjectCollectionViewSet.list

    def held_once(self, request):
        if not started.is_set():
            started.set()
            release.wait(timeout=10)
        return original(self, request)

    monkeypatch.setattr(ProjectCollectionViewSet, "list", held_once)
    left = asyncio.create_task(asgi_get_then_leave("/api/v1/projects", token_header, started))
    await asyncio.to_thread(started.wait, 10)
    start, _ = await asyncio.wait_for(asgi_get("/api/v1/projects", token_header), timeout=10)
    assert start["status"] == 200
    release.set()
    await asyncio.wait_for(left, timeout=10)
    start, _ = await asgi_get("/api/v1/projects", token_header)
    assert start["status"] == 200
    assert len(view_threads) == 3 and view_threads[0] != view_threads[1] and view_threads[2] in view_threads[:2]


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_request_cancelled_with_its_view_running_never_lends_that_thread(
        monkeypatch, token_header, view_threads):
    started, release, held_in = threading.Event(), threading.Event(), []
    original = ProjectCollectionViewSet.list

    def held(self, request):
        held_in.append(threading.get_ident())
        started.set()
        release.wait(timeout=10)
        return original(self, request)

    monkeypatch.setattr(ProjectCollectionViewSet, "list", held)
    closed = threading.Event()
    close_all = connections.close_all

    def close_all_and_tell():
        close_all()
        closed.set()

    monkeypatch.setattr(connections, "close_all", close_all_and_tell)
    checked_out = await database_sync_to_async(connections_checked_out)()
    cancelled = asyncio.create_task(asgi_get("/api/v1/projects", token_header))
    await asyncio.to_thread(started.wait, 10)
    cancelled.cancel()  # as a server stopping does
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    monkeypatch.setattr(ProjectCollectionViewSet, "list", original)
    try:
        for _ in range(2):  # neither waits behind the held view
            start, _ = await asyncio.wait_for(asgi_get("/api/v1/projects", token_header), timeout=5)
            assert start["status"] == 200
    finally:
        release.set()
    assert len(view_threads) == 2 and held_in[0] not in view_threads
    # Its thread gives its database connection back once the view is done (no request_finished comes).
    assert await asyncio.to_thread(closed.wait, 10)
    assert await database_sync_to_async(connections_checked_out)() == checked_out


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_thread_not_kept_closes_its_connections_before_it_stops(monkeypatch, token_header):
    monkeypatch.setattr(django_asgi_app.threads, "idle_kept", 0)
    viewed_in, closed_in = [], []
    original, close_all = ProjectCollectionViewSet.list, connections.close_all

    def recorded(self, request):
        viewed_in.append(threading.current_thread())  # the thread itself: a stopped thread's id is reused
        return original(self, request)

    def close_all_and_tell():
        close_all()
        closed_in.append(threading.current_thread())

    monkeypatch.setattr(ProjectCollectionViewSet, "list", recorded)
    monkeypatch.setattr(connections, "close_all", close_all_and_tell)
    for _ in range(2):
        start, _ = await asgi_get("/api/v1/projects", token_header)
        assert start["status"] == 200
    await asyncio.to_thread(lambda: [thread.join(10) for thread in viewed_in])
    assert viewed_in[0] is not viewed_in[1] and not any(thread.is_alive() for thread in viewed_in)
    assert closed_in == viewed_in

def connections_checked_out() -> int | None:
    """How many of the pool's connections are handed out (PostgreSQL); None without a pool."""
    pool = getattr(connection, "pool", None)
    if pool is None:
        return None
    stats = pool.get_stats()
    return stats["pool_size"] - stats["pool_available"]


async def asgi_get_then_leave(path: str, headers, view_started: threading.Event) -> None:
    """A GET whose client disconnects once the view has started."""
    messages = [{"type": "http.request", "body": b"", "more_body": False}]

    async def receive():
        if messages:
            return messages.pop()
        await asyncio.to_thread(view_started.wait, 10)
        return {"type": "http.disconnect"}

    async def send(message):
        pass  # nobody is listening

    await application(http_scope(path, headers), receive, send)
