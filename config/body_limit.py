"""Request bodies larger than the largest legal request are refused with 413 before they are read.

The check sits in the ASGI stack (config/asgi.py), so it holds under any server that streams bodies to
the application: by `Content-Length` before a byte of the body is read, and for a chunked body by
counting bytes as they arrive and stopping at the limit. The refusal itself is answered by Django
(`RefuseOversizedBody`), so it is JSON and carries the security and rate-limit headers of every answer.

Limits: a multipart body on an upload route (an API path ending in `/attachments`) may carry
DATA_UPLOAD_MAX_NUMBER_FILES files of attachments.uploads.MAX_FILE_SIZE plus their multipart framing;
any other body REQUEST_BODY_MAX_SIZE (JSON: a 100,000-character description, escaped, fits many times).
"""

import re

from django.conf import settings
from django.http import JsonResponse

UPLOAD_ROUTE = re.compile(r"^/api/.+/attachments/?$")
# Part headers, boundaries and the small text fields beside the files.
MULTIPART_OVERHEAD = 1024 * 1024
REFUSED = "tracker.body_refused"  # scope key: the limit the body went over

FINAL_EMPTY_BODY = {"type": "http.request", "body": b"", "more_body": False}


def upload_body_max_size() -> int:
    from attachments.uploads import MAX_FILE_SIZE

    return settings.DATA_UPLOAD_MAX_NUMBER_FILES * MAX_FILE_SIZE + MULTIPART_OVERHEAD


def body_limit(scope) -> int:
    if UPLOAD_ROUTE.match(scope["path"]) and header(scope, b"content-type").startswith(b"multipart/form-data"):
        return upload_body_max_size()
    return settings.REQUEST_BODY_MAX_SIZE


def header(scope, name: bytes) -> bytes:
    return next((value for key, value in scope["headers"] if key.lower() == name), b"").lower()


def declared_length(scope) -> int | None:
    value = header(scope, b"content-length")
    return int(value) if value.isdigit() else None


class BodySizeLimit:
    """ASGI middleware for the HTTP app."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        scope = dict(scope)
        limit = body_limit(scope)
        length = declared_length(scope)
        if length is not None and length > limit:
            scope[REFUSED] = limit
            return await self.app(scope, self._nothing_read, send)
        received = 0

        async def counting_receive():
            nonlocal received
            if REFUSED in scope:
                return FINAL_EMPTY_BODY
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    # What was read stays (at most the limit); the rest is never read: the server drops it
                    # with the connection once the 413 is sent.
                    scope[REFUSED] = limit
                    return FINAL_EMPTY_BODY
            return message

        return await self.app(scope, counting_receive, send)

    @staticmethod
    async def _nothing_read():
        return FINAL_EMPTY_BODY


class RefuseOversizedBody:
    """Django middleware answering the requests BodySizeLimit marked, before any view looks at the body."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        limit = getattr(request, "scope", {}).get(REFUSED)
        if limit is not None:
            response = JsonResponse({"error": f"request body too large: at most {limit} bytes here"}, status=413)
            response["Connection"] = "close"
            return response
        return self.get_response(request)
