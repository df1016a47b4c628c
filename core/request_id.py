"""X-Request-ID (decisions.md, "Operations"): every HTTP answer carries one, and every log line written
while a request or a websocket is served names it.

The id is the client's (or the proxy's) own when it is 1 to 128 characters of [A-Za-z0-9._-], else a new
one: a value of any other shape could forge log lines or smuggle markup into the tools that read them.
It lives in a context variable, set in the ASGI stack (config/application.py) before anything else runs:
asgiref copies the context into the thread that runs the request's middleware and view, so the
request's log lines, Django's included, see it through RequestIdFilter.
"""

import logging
import re
import uuid
from contextvars import ContextVar

HEADER = b"x-request-id"
WELL_FORMED = re.compile(rb"[A-Za-z0-9._-]{1,128}")
NONE = "-"  # the id of a log line written outside any request (start-up, background sweeps)

current_request_id: ContextVar[str] = ContextVar("request_id", default=NONE)


def request_id_of(headers: list[tuple[bytes, bytes]]) -> str:
    """The incoming id when there is exactly one and it is well-formed; else a new one."""
    given = [value for name, value in headers if name.lower() == HEADER]
    if len(given) == 1 and WELL_FORMED.fullmatch(given[0]):
        return given[0].decode("ascii")
    return uuid.uuid4().hex


class RequestIdMiddleware:
    """ASGI middleware, outermost: sets the id for the connection's task and stamps it on the answer (an
    accepted websocket's handshake included; its log lines carry the id for the socket's whole life)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        request_id = request_id_of(scope["headers"])
        current_request_id.set(request_id)  # this connection's task only: each has a context of its own
        stamp = (HEADER, request_id.encode("ascii"))

        async def send_with_id(message):
            # The answer's head: an HTTP response's, or a websocket handshake's when it is accepted.
            if message["type"] in ("http.response.start", "websocket.accept"):
                headers = [(name, value) for name, value in message.get("headers", ()) if name.lower() != HEADER]
                message = {**message, "headers": [*headers, stamp]}
            await send(message)

        return await self.app(scope, receive, send_with_id)


# For settings.LOGGING (and gunicorn's own lines under the Procfile, config/gunicorn.py): "text", or "json"
# with LOG_FORMAT=json, one object per line.
LOG_FILTERS = {"request_id": {"()": "core.request_id.RequestIdFilter"}}
LOG_FORMATTERS = {
    "text": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"},
    "json": {"()": "pythonjsonlogger.json.JsonFormatter", "style": "{", "timestamp": "time",
             "fmt": "{levelname}{name}{request_id}{message}", "rename_fields": {"levelname": "level", "name": "logger"}},
}


class RequestIdFilter(logging.Filter):
    """Gives every record a `request_id` attribute (NONE outside a request), for the log formats."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = current_request_id.get()
        return True
