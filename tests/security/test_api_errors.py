"""Every answer under /api/ is JSON with `error` and the security headers, whatever layer refuses it."""

import asyncio
import json

import pytest
from django.test import RequestFactory
from rest_framework.test import APIClient

from config.application import application
from core.api.views import csrf_failure

SECURITY_HEADERS = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin",
                    "Cross-Origin-Opener-Policy": "same-origin"}


@pytest.fixture
def api(client_for, manager):
    return client_for(manager)


MALFORMED = {
    "unparseable multipart": lambda api: api.post("/api/v1/projects", data=b"--x\r\nnot a part",
                                                  content_type="multipart/form-data"),
    "multipart with a broken part": lambda api: api.post(
        "/api/v1/projects", data=b'--x\r\nContent-Disposition: form-data; name="name"\r\n\r\nApollo',
        content_type="multipart/form-data; boundary=\x00"),
    "malformed JSON": lambda api: api.post("/api/v1/projects", data=b'{"name": ', content_type="application/json"),
    "JSON not UTF-8": lambda api: api.post("/api/v1/projects", data=b'{"name": "\xff\xfe"}',
                                           content_type="application/json"),
    "unknown path": lambda api: api.get("/api/v1/nowhere"),
    "wrong method": lambda api: api.delete("/api/v1/projects"),
    "unsupported media type": lambda api: api.post("/api/v1/projects", data="name=x", content_type="text/plain"),
    "host not allowed": lambda api: api.get("/api/v1/projects", HTTP_HOST="evil.example"),
    "no token": lambda api: APIClient().get("/api/v1/projects"),
    "bad token": lambda api: APIClient().get("/api/v1/projects", HTTP_AUTHORIZATION="Bearer " + "0" * 64),
    "malformed token": lambda api: APIClient().get("/api/v1/projects", HTTP_AUTHORIZATION="Bearer nope"),
}


@pytest.mark.parametrize("send", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_requests_answer_json_with_security_headers(api, send):
    response = send(api)
    assert 400 <= response.status_code < 500
    assert response["Content-Type"] == "application/json"
    assert isinstance(response.json()["error"], str)
    for name, value in SECURITY_HEADERS.items():
        assert response[name] == value
    assert int(response["X-RateLimit-Remaining"]) >= 0


def test_csrf_failure_under_api_is_json(rf: RequestFactory):
    response = csrf_failure(rf.post("/api/v1/projects"), reason="CSRF cookie not set.")
    assert (response.status_code, response["Content-Type"]) == (403, "application/json")
    assert response.content == b'{"error": "CSRF check failed: CSRF cookie not set.", "code": "forbidden"}'


def test_csrf_failure_on_pages_stays_html(rf: RequestFactory):
    response = csrf_failure(rf.post("/accounts/login/"), reason="CSRF cookie not set.")
    assert (response.status_code, response["Content-Type"]) == (403, "text/html; charset=utf-8")


# ---- the body guard, through the ASGI application as a server calls it

async def asgi_post(path: str, body_messages: list[bytes], headers: list[tuple[bytes, bytes]]):
    """POSTs the body in several messages, as a server streams a chunked body; the answer's start and body."""
    scope = {"type": "http", "http_version": "1.1", "method": "POST", "path": path, "raw_path": path.encode(),
             "query_string": b"", "root_path": "", "scheme": "https", "headers": [(b"host", b"testserver"), *headers],
             "client": ("127.0.0.1", 40000), "server": ("testserver", 443)}
    pending = [{"type": "http.request", "body": chunk, "more_body": True} for chunk in body_messages]
    pending.append({"type": "http.request", "body": b"", "more_body": False})
    read, sent = [], []

    async def receive():
        if pending:
            read.append(pending.pop(0))
            return read[-1]
        await asyncio.Future()  # the client stays: Django's watch for a disconnect is cancelled after the answer

    async def send(message):
        sent.append(message)

    await application(scope, receive, send)
    start = next(message for message in sent if message["type"] == "http.response.start")
    body = b"".join(message.get("body", b"") for message in sent if message["type"] == "http.response.body")
    return start, body, len(read)


def header_of(start, name: bytes) -> str:
    return next(value for key, value in start["headers"] if key.lower() == name).decode()


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_declared_length_over_the_limit_is_413_before_reading(settings):
    too_big = settings.REQUEST_BODY_MAX_SIZE + 1
    start, body, messages_read = await asgi_post(
        "/api/v1/projects", [b"x" * 1024], [(b"content-length", str(too_big).encode()),
                                            (b"content-type", b"application/json")])
    assert (start["status"], messages_read) == (413, 0)
    assert json.loads(body) == {"code": "payload_too_large",
                                "error": f"request body too large: at most {settings.REQUEST_BODY_MAX_SIZE} bytes here"}
    assert header_of(start, b"content-type") == "application/json"
    assert header_of(start, b"x-content-type-options") == "nosniff"
    assert header_of(start, b"x-ratelimit-limit") == str(settings.API_ANON_RATE_LIMIT_PER_MINUTE)


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_chunked_body_is_cut_once_past_the_limit(settings):
    settings.REQUEST_BODY_MAX_SIZE = 100_000
    chunks = [b" " * 10_000] * 1_000  # 10 MB, sent as a chunked body
    start, body, messages_read = await asgi_post("/api/v1/projects", chunks, [(b"content-type", b"application/json")])
    assert start["status"] == 413
    assert messages_read == 11  # the chunk that went over the limit is the last one read


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_upload_route_without_a_valid_token_gets_only_the_small_limit(settings):
    path = "/api/v1/projects/1/tickets/1/attachments"
    headers = [(b"content-type", b"multipart/form-data; boundary=x"),
               (b"content-length", str(settings.REQUEST_BODY_MAX_SIZE + 1).encode()),
               (b"authorization", b"Bearer " + b"0" * 64)]
    start, _, messages_read = await asgi_post(path, [], headers)
    assert (start["status"], messages_read) == (413, 0)


async def big_upload(path: str, user, settings) -> tuple[int, int]:
    """A multipart body of twice the small limit to `path` with a token of `user`: the status, and how many
    body messages the application read."""
    from channels.db import database_sync_to_async

    from accounts.services import issue_token

    _, plain = await database_sync_to_async(issue_token)(user=user)
    size = settings.REQUEST_BODY_MAX_SIZE * 2
    headers = [(b"content-type", b"multipart/form-data; boundary=x"), (b"content-length", str(size).encode()),
               (b"authorization", f"Bearer {plain}".encode())]
    start, _, messages_read = await asgi_post(path, [b"x" * (size // 2)] * 2, headers)
    return start["status"], messages_read


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_upload_route_with_a_valid_token_reads_a_big_body(project, editor, settings):
    from channels.db import database_sync_to_async

    from tests.factories import TicketFactory

    ticket = await database_sync_to_async(TicketFactory)(project=project)
    status, messages_read = await big_upload(f"/api/v1/tickets/{ticket.pk}/attachments", editor, settings)
    assert (status, messages_read) == (400, 3)  # read to the end, then judged by the view: not multipart


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
@pytest.mark.parametrize("where", ["no such ticket", "another project's ticket", "role too low", "not an upload route"])
async def test_a_big_body_the_caller_may_not_upload_is_refused_unread(where, project, editor, viewer, settings):
    """Judged from the path and token before a byte is read: nothing is spooled for a caller who would
    be refused anyway (403, 404) or a route that takes no upload."""
    from channels.db import database_sync_to_async

    from tests.factories import TicketFactory

    ticket, other = await database_sync_to_async(lambda: (TicketFactory(project=project), TicketFactory()))()
    path, user = {
        "no such ticket": ("/api/v1/tickets/999999/attachments", editor),
        "another project's ticket": (f"/api/v1/tickets/{other.pk}/attachments", editor),
        "role too low": (f"/api/v1/tickets/{ticket.pk}/attachments", viewer),
        "not an upload route": (f"/api/v1/tickets/{ticket.pk}/checklist", editor),
    }[where]
    assert await big_upload(path, user, settings) == (413, 0)
