"""The gunicorn worker class of the Procfile's `web:` line, and the limits it sets on every connection,
whatever sits in front (decisions.md, "server limits").

- HTTP is parsed by h11, and a request head (request line and header fields) over HEADERS_MAX_BYTES
  (64 KiB) is refused: a 400 and the connection closed. (httptools, uvicorn's default, buffers headers
  without bound: one 300 MB header stalled a worker until gunicorn killed it.)
- A request's head must arrive within WEB_HEADERS_TIMEOUT (10 s) of the connection, or of the previous
  response on a kept-alive one, and each step of its body within WEB_BODY_STEP_TIMEOUT (30 s) while the
  server waits for it; past either, the connection is closed. uvicorn has neither deadline (only an idle
  keep-alive timer, stopped by the first byte), so a client that trickles a byte now and then, or sends
  nothing after connecting, held its connection and file descriptor for ever.
- At most WEB_MAX_CONNECTIONS (1000) connections per worker process, websockets included: a request
  beyond gets 503 at once (uvicorn's `limit_concurrency`).
- Websocket messages over WS_MAX_BYTES are refused by uvicorn before they are buffered whole (the
  application refuses anything over WEBSOCKET_MAX_FRAME_BYTES anyway).
- Each worker raises its soft limit of open files to the hard one (no privilege needed): with the common
  soft limit of 1,024, some thousand slow connections left no descriptor for the clients that count.
"""

import asyncio
import logging
import os
import resource

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn_worker import UvicornWorker

HEADERS_MAX_BYTES = 64 * 1024
HEADERS_SECONDS = float(os.environ.get("WEB_HEADERS_TIMEOUT") or 10)
BODY_STEP_SECONDS = float(os.environ.get("WEB_BODY_STEP_TIMEOUT") or 30)
MAX_CONNECTIONS = int(os.environ.get("WEB_MAX_CONNECTIONS") or 1000)
WS_MAX_BYTES = 64 * 1024

logger = logging.getLogger("uvicorn.error")


class HeadLimitedConnection(h11.Connection):
    """h11's connection, refusing a request whose head exceeds HEADERS_MAX_BYTES however it arrived: h11's
    own limit applies to the bytes it holds while the head is incomplete, so a head that came in one read
    escaped it. uvicorn answers the error 400 and closes the connection."""

    def next_event(self):
        event = super().next_event()
        if isinstance(event, h11.Request) and head_size(event) > HEADERS_MAX_BYTES:
            raise h11.RemoteProtocolError("request head too large")  # uvicorn answers 400 and closes
        return event


def head_size(request: h11.Request) -> int:
    """The bytes of the request line and header fields, as h11 parsed them."""
    line = len(request.method) + len(request.target) + len(b" HTTP/1.1\r\n") + 1
    return line + sum(len(name) + len(value) + len(b": \r\n") for name, value in request.headers) + 2


class DeadlinedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the two deadlines it lacks: a request's head within HEADERS_SECONDS
    (counted once, from when it is awaited: bytes trickling in do not extend it), each step of its body
    within BODY_STEP_SECONDS (renewed by every byte). While the application works, or reads nothing it has
    been sent (flow control paused the reading), no deadline runs; after an upgrade to a websocket, none."""

    deadline: asyncio.TimerHandle | None = None
    awaiting: str | None = None  # "head" or "body"
    upgraded = False

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.conn = HeadLimitedConnection(h11.SERVER, HEADERS_MAX_BYTES)

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self.follow_request()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self.follow_request()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self.follow_request()

    def handle_websocket_upgrade(self, event: h11.Request) -> None:
        self.upgraded = True  # the connection is the websocket protocol's from now on
        self.await_nothing()
        super().handle_websocket_upgrade(event)

    def connection_lost(self, exc: Exception | None) -> None:
        self.await_nothing()
        super().connection_lost(exc)

    def follow_request(self) -> None:
        if self.upgraded or self.transport.is_closing():
            return self.await_nothing()
        state = self.conn.their_state
        if state is h11.IDLE:
            if self.awaiting != "head":  # a new head: its deadline starts now, and only now
                self.await_("head", HEADERS_SECONDS)
        elif state is h11.SEND_BODY:
            self.await_("body", BODY_STEP_SECONDS)
        else:
            self.await_nothing()

    def await_(self, what: str, seconds: float) -> None:
        self.await_nothing()
        self.awaiting, self.deadline = what, self.loop.call_later(seconds, self.deadline_passed)

    def await_nothing(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
        self.awaiting, self.deadline = None, None

    def deadline_passed(self) -> None:
        if self.awaiting == "body" and self.flow.read_paused:  # the application's delay, not the client's
            return self.await_("body", BODY_STEP_SECONDS)
        logger.info("%s:%s - closed: the request's %s took over its deadline", *(self.client or ("?", "?")),
                    self.awaiting)
        self.await_nothing()
        if not self.transport.is_closing():
            self.transport.close()


def raise_open_files_limit() -> None:
    """The soft limit of open files up to the hard one, as any process may."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


class Worker(UvicornWorker):
    """uvicorn's worker with the limits above, and without websocket compression (permessage-deflate).

    A board frame is a small JSON object sent to every viewer: compressing it costs each connection
    its own zlib state (about 35 KiB, kept for the socket's life: 72 → 38 KiB per connection in the
    fan-out benchmark) and a compression per viewer per frame, to save little on frames this small.
    """

    CONFIG_KWARGS = {**UvicornWorker.CONFIG_KWARGS, "ws_per_message_deflate": False, "http": DeadlinedH11Protocol,
                     "h11_max_incomplete_event_size": HEADERS_MAX_BYTES, "limit_concurrency": MAX_CONNECTIONS,
                     "ws_max_size": WS_MAX_BYTES}

    def init_process(self) -> None:
        raise_open_files_limit()
        super().init_process()
