"""Request bodies larger than the largest legal request are refused with 413 before they are read.

The check sits in the ASGI stack (config/asgi.py), so it holds under any server that streams bodies to
the application: by `Content-Length` before a byte of the body is read, and for a chunked body by
counting bytes as they arrive and stopping at the limit. The refusal itself is answered by Django
(`RefuseOversizedBody`), so it is JSON and carries the security and rate-limit headers of every answer.

Limits: a multipart body on an upload route (an API path ending in `/attachments`) with a valid token
may carry DATA_UPLOAD_MAX_NUMBER_FILES files of attachments.uploads.MAX_FILE_SIZE plus their multipart
framing; any other body REQUEST_BODY_MAX_SIZE (JSON: a 100,000-character description, escaped, fits).
"""

import asyncio
import re

from channels.db import database_sync_to_async
from django.conf import settings
from django.http import JsonResponse

from accounts.authentication import authenticate_token
from accounts.services import BEARER
from attachments.uploads import MAX_FILE_SIZE

UPLOAD_ROUTE = re.compile(r"^/api/.+/attachments/?$")
# Part headers, boundaries and the small text fields beside the files.
MULTIPART_OVERHEAD = 1024 * 1024
REFUSED = "tracker.body_refused"  # scope key: the limit the body went over

FINAL_EMPTY_BODY = {"type": "http.request", "body": b"", "more_body": False}


def upload_body_max_size() -> int:
    return settings.DATA_UPLOAD_MAX_NUMBER_FILES * MAX_FILE_SIZE + MULTIPART_OVERHEAD


def header(scope, name: bytes) -> str:
    return next((value for key, value in scope["headers"] if key.lower() == name), b"").decode("latin1")


def declared_length(scope) -> int | None:
    value = header(scope, b"content-length")
    return int(value) if value.isdigit() else None


def may_upload(scope) -> bool:
    return bool(UPLOAD_ROUTE.match(scope["path"])) and header(scope, b"content-type").lower().startswith(
        "multipart/form-data")


async def has_valid_token(scope) -> bool:
    match = BEARER.fullmatch(header(scope, b"authorization").strip())
    return match is not None and await database_sync_to_async(authenticate_token)(match.group(1)) is not None


class BodySizeLimit:
    """ASGI middleware for the HTTP app. A body over REQUEST_BODY_MAX_SIZE is read only on an upload
    route and only with a valid token (one indexed lookup, made once the body is known to be that big)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        scope = dict(scope)
        limit = settings.REQUEST_BODY_MAX_SIZE
        can_grow = may_upload(scope)

        async def allowed(size: int) -> bool:
            nonlocal limit, can_grow
            if size > limit and can_grow:
                can_grow = False
                if await has_valid_token(scope):
                    limit = upload_body_max_size()
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
            return JsonResponse({"error": f"request body too large: at most {limit} bytes here"}, status=413)
        return self.get_response(request)
