"""Request bodies larger than the largest legal request are refused with 413 before they are read.

The check sits in the ASGI stack (config/application.py), so it holds under any server that streams bodies to
the application: by `Content-Length` before a byte of the body is read, and for a chunked body by
counting bytes as they arrive and stopping at the limit. The refusal itself is answered by Django
(`RefuseOversizedBody`), so it is JSON and carries the security and rate-limit headers of every answer.

Limits: REQUEST_BODY_MAX_SIZE for every body (JSON: a 100,000-character description, escaped, fits),
unless the view the path resolves to admits a larger one for this request, judged from its path and
headers before a byte of the body is read: an upload view grants one to a caller who may upload there
(its `body_limit_for(request, match)`). Django spools a whole body to disk before routing it, so
without this a caller could park hundreds of megabytes on the server per connection for any path.
"""

import asyncio
import io

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.sessions.middleware import SessionMiddleware
from django.core.handlers.asgi import ASGIRequest
from django.db import close_old_connections
from django.urls import Resolver404, resolve

from core.api.errors import error_response

REFUSED = "tracker.body_refused"  # scope key: the limit the body went over

FINAL_EMPTY_BODY = {"type": "http.request", "body": b"", "more_body": False}


def header(scope, name: bytes) -> str:
    return next((value for key, value in scope["headers"] if key.lower() == name), b"").decode("latin1")


def declared_length(scope) -> int | None:
    value = header(scope, b"content-length")
    return int(value) if value.isdigit() else None


def may_be_upload(scope) -> bool:
    return header(scope, b"content-type").lower().startswith("multipart/form-data")


def granted_body_limit(scope) -> int | None:
    """The larger body the view at this path admits for this request (None: the default limit holds),
    asked with a request that has the path, headers and session but no body."""
    try:
        match = resolve(scope["path"])
    except Resolver404:
        return None
    body_limit_for = getattr(getattr(match.func, "cls", None), "body_limit_for", None)
    if body_limit_for is None:
        return None
    request = ASGIRequest(scope, io.BytesIO())
    # The session and user as the middleware would set them, for a browser's upload.
    SessionMiddleware(lambda _: None).process_request(request)
    AuthenticationMiddleware(lambda _: None).process_request(request)
    try:
        return body_limit_for(request, match)
    finally:
        close_old_connections()


class BodySizeLimit:
    """ASGI middleware for the HTTP app."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        scope = dict(scope)
        limit = settings.REQUEST_BODY_MAX_SIZE
        can_grow = may_be_upload(scope)

        async def allowed(size: int) -> bool:
            nonlocal limit, can_grow
            if size > limit and can_grow:
                can_grow = False
                limit = await sync_to_async(granted_body_limit)(scope) or limit
            if size > limit:
                scope[REFUSED] = limit
                return False
            return True

        length = declared_length(scope)
        if length is not None and not await allowed(length):
            return await self.app(scope, refused_body(), send)
        received = 0
        after_refusal = refused_body()

        async def counting_receive():
            nonlocal received
            if REFUSED in scope:
                return await after_refusal()
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if not await allowed(received):
                    # What was read stays (at most the limit); the application never sees the rest. A server
                    # that keeps the connection (uvicorn) skips it as it arrives, so the client reads the 413
                    # instead of a reset.
                    return await after_refusal()
            return message

        return await self.app(scope, counting_receive, send)


def refused_body():
    """The receive() of a refused request: an empty body, then nothing: Django's wait for a disconnect
    ends when it has sent the 413."""
    ended = False

    async def receive():
        nonlocal ended
        if ended:
            await asyncio.Future()
        ended = True
        return FINAL_EMPTY_BODY

    return receive


class RefuseOversizedBody:
    """Django middleware answering the requests BodySizeLimit marked, before any view looks at the body."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        limit = getattr(request, "scope", {}).get(REFUSED)
        if limit is not None:
            return error_response(f"request body too large: at most {limit} bytes here", status=413)
        return self.get_response(request)
