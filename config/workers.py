"""The gunicorn worker class of the Procfile's `web:` line, and the limits it sets on every connection,
whatever sits in front (decisions.md, "server limits" and "availability limits").

- HTTP is parsed by h11, and a request head (request line and header fields) over HEADERS_MAX_BYTES
  (64 KiB) is refused: a 400 and the connection closed. (httptools, uvicorn's default, buffers headers
  without bound: one 300 MB header stalled a worker until gunicorn killed it.)
- A request's head must arrive within WEB_HEADERS_TIMEOUT (10 s) of the connection, or of the previous
  response on a kept-alive one. Its body must keep coming: each step within WEB_BODY_STEP_TIMEOUT (30 s),
  at WEB_BODY_MIN_RATE (1 KiB/s) on average once WEB_BODY_RATE_GRACE (10 s) have passed (Apache's
  mod_reqtimeout `body=10,MinRate=1024`: each KiB received buys a second more), and all of it within
  WEB_BODY_TIMEOUT (600 s). Past any of these the connection is closed. Time the server itself does not
  read (flow control: the application has not taken what came) does not count. uvicorn has none of these
  (only an idle keep-alive timer, stopped by the first byte): a client that trickles a byte now and then, or
  sends nothing after connecting, held its connection and file descriptor for ever, and a permitted
  uploader's body trickled in held its temporary file as long.
- Connections are counted per worker process, websockets apart (once a connection is upgraded it leaves
  these counts; core/sockets.py counts websockets): at most WEB_MAX_CONNECTIONS (1000) HTTP connections,
  and at most WEB_MAX_CONNECTIONS_PER_ADDRESS (100) from one client address (IPv6: per /64), except from
  the trusted proxies (FORWARDED_ALLOW_IPS, which carry many clients' connections and limit them
  themselves). A connection beyond either gets one answer, to its first request, without the
  application: 429 (per address) or 503 (the worker is full) as the API's JSON with `Retry-After`, then
  the connection is closed; it has a second to send that request. (uvicorn's `limit_concurrency` counted
  websockets and requests together, so sockets that any account may open starved every request, answered
  with 503 as text.)
- Websocket messages over WS_MAX_BYTES are refused by uvicorn before they are buffered whole (the
  application refuses anything over WEBSOCKET_MAX_FRAME_BYTES anyway).
- Each worker raises its soft limit of open files to the hard one (no privilege needed): with the common
  soft limit of 1,024, some thousand slow connections left no descriptor for the clients that count.

Private uvicorn APIs this module relies on (tests/config/test_server_internals.py resolves each of them and
checks what it does, and fails by name when an upgrade changes one):
- `uvicorn.protocols.http.h11_impl.H11Protocol`, subclassed: its `connection_made`, `data_received`,
  `connection_lost`, `on_response_complete` and `handle_websocket_upgrade`, and the attributes `conn` (the
  h11 connection), `app` (what each request of the connection runs), `flow` (`read_paused`), `transport`,
  `client` and `loop`;
- `uvicorn.config.Config.forwarded_allow_ips`, the trusted proxies as configured;
- `uvicorn_worker.UvicornWorker.CONFIG_KWARGS`, the worker's settings of uvicorn's Config.
"""

import asyncio
import functools
import ipaddress
import json
import logging
import os
import resource
import time
from collections import Counter

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn_worker import UvicornWorker

from core.api.busy import BUSY
from core.api.errors import error_body
from core.ratelimit import address_bucket


def env_number(name: str, default: float) -> float:
    return float(os.environ.get(name) or default)


HEADERS_MAX_BYTES = 64 * 1024
HEADERS_SECONDS = env_number("WEB_HEADERS_TIMEOUT", 10)
REFUSED_HEADERS_SECONDS = 1.0  # a connection over a limit: time to send the request its refusal answers
BODY_STEP_SECONDS = env_number("WEB_BODY_STEP_TIMEOUT", 30)
BODY_MIN_RATE = env_number("WEB_BODY_MIN_RATE", 1024)  # bytes a second, on average
BODY_RATE_GRACE_SECONDS = env_number("WEB_BODY_RATE_GRACE", 10)
BODY_SECONDS = env_number("WEB_BODY_TIMEOUT", 600)
BODY_CHECK_SECONDS = 1.0
MAX_CONNECTIONS = int(env_number("WEB_MAX_CONNECTIONS", 1000))
MAX_CONNECTIONS_PER_ADDRESS = int(env_number("WEB_MAX_CONNECTIONS_PER_ADDRESS", 100))
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


def refusing_app(status: int, message: str):
    """The ASGI application that answers every request of a refused connection, and asks for its close."""
    body = json.dumps(error_body(message, status=status)).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
               (b"retry-after", b"1"), (b"connection", b"close")]

    async def refuse(scope, receive, send):
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    refuse.answer = (status, headers, body)
    return refuse


OVER_ADDRESS_LIMIT = refusing_app(429, "too many connections from your address")
WORKER_FULL = refusing_app(503, BUSY)


class ConnectionCounts:
    """The HTTP connections this worker process holds, in all and by client address."""

    def __init__(self):
        self.total = 0
        self.by_address: Counter[str] = Counter()

    def admit(self, address: str | None):
        """None when a connection from `address` (None: not counted per address) is admitted, and counted;
        else the application that refuses it."""
        if address is not None and self.by_address[address] >= MAX_CONNECTIONS_PER_ADDRESS:
            return OVER_ADDRESS_LIMIT
        if self.total >= MAX_CONNECTIONS:
            return WORKER_FULL
        self.total += 1
        if address is not None:
            self.by_address[address] += 1
        return None

    def release(self, address: str | None) -> None:
        self.total -= 1
        if address is not None:
            self.by_address[address] -= 1
            if not self.by_address[address]:
                del self.by_address[address]


COUNTS = ConnectionCounts()


def trusted_networks(forwarded_allow_ips) -> list | None:
    """The trusted proxies' networks from uvicorn's setting (a comma list or a list); None: all are ("*")."""
    items = forwarded_allow_ips.split(",") if isinstance(forwarded_allow_ips, str) else forwarded_allow_ips or []
    return _networks(tuple(item.strip() for item in items if item.strip()))


@functools.cache
def _networks(items: tuple[str, ...]) -> list | None:
    if "*" in items:
        return None
    networks = []
    for item in items:
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:  # a Unix socket path, or a name: no address of a TCP client
            continue
    return networks


def counted_address(client: tuple[str, int] | None, trusted: list | None) -> str | None:
    """The bucket a client's connections count in (core.ratelimit.address_bucket), or None when they are
    not counted per address: a trusted proxy's, or a Unix socket peer's."""
    if client is None or trusted is None:
        return None
    try:
        address = ipaddress.ip_address(client[0])
    except ValueError:
        return None
    if any(address in network for network in trusted):
        return None
    return address_bucket(client[0])


class BodyClock:
    """How a request body is arriving, on the server's clock less the time it did not read (flow control)."""

    def __init__(self, now: float):
        self.started = self.checked_at = self.progressed_at = now
        self.paused = 0.0  # seconds the server did not read
        self.received = 0

    def progress(self, size: int, now: float) -> None:
        self.received += size
        self.progressed_at = now

    def verdict(self, now: float, *, reading: bool) -> str | None:
        """Why the body is too slow now, or None; while the server does not read, the clocks stand still."""
        if not reading:
            self.paused += now - self.checked_at
            self.progressed_at += now - self.checked_at
        self.checked_at = now
        if not reading:
            return None
        waited = now - self.started - self.paused
        if waited > BODY_SECONDS:
            return f"took over its {BODY_SECONDS:g} s deadline"
        if now - self.progressed_at > BODY_STEP_SECONDS:
            return f"sent nothing for {BODY_STEP_SECONDS:g} s"
        if self.received < BODY_MIN_RATE * (waited - BODY_RATE_GRACE_SECONDS):
            return f"came slower than {BODY_MIN_RATE:g} bytes/s"
        return None


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the limits above: the head's deadline (counted once, from when the head is
    awaited: bytes trickling in do not extend it), the body's pace, and the connection counts. While the
    application works no deadline runs; after an upgrade to a websocket, none, and it leaves the counts."""

    deadline: asyncio.TimerHandle | None = None
    awaiting: str | None = None  # "head" or "body"
    body: BodyClock | None = None
    upgraded = False
    counted = False
    address: str | None = None

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.conn = HeadLimitedConnection(h11.SERVER, HEADERS_MAX_BYTES)

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self.address = counted_address(self.client, trusted_networks(self.config.forwarded_allow_ips))
        refusal = COUNTS.admit(self.address)
        if refusal is None:
            self.counted = True
        else:
            self.app = refusal  # every request of this connection: answered, then the connection closed
            refused_now(refusal, self.client)
        self.follow_request()

    def data_received(self, data: bytes) -> None:
        if self.awaiting == "body":
            self.body.progress(len(data), self.loop.time())
        super().data_received(data)
        self.follow_request()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self.follow_request()

    def handle_websocket_upgrade(self, event: h11.Request) -> None:
        if not self.counted:  # a refused connection is refused whatever it asks
            return self.send_refusal()
        self.upgraded = True  # the connection is the websocket protocol's from now on
        self.await_nothing()
        self.uncount()
        super().handle_websocket_upgrade(event)

    def send_refusal(self) -> None:
        """The refusal of this connection as an answer to its handshake, written as uvicorn writes its 400s."""
        status, headers, body = self.app.answer
        for event in [h11.Response(status_code=status, headers=headers), h11.Data(data=body), h11.EndOfMessage()]:
            self.transport.write(self.conn.send(event))
        self.await_nothing()
        self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.await_nothing()
        self.uncount()
        super().connection_lost(exc)

    def uncount(self) -> None:
        if self.counted:
            self.counted = False
            COUNTS.release(self.address)

    def follow_request(self) -> None:
        if self.upgraded or self.transport.is_closing():
            return self.await_nothing()
        state = self.conn.their_state
        if state is h11.IDLE:
            if self.awaiting != "head":  # a new head: its deadline starts now, and only now
                self.await_head()
        elif state is h11.SEND_BODY:
            if self.awaiting != "body":
                self.await_body()
        else:
            self.await_nothing()

    def await_head(self) -> None:
        self.await_nothing()
        seconds = HEADERS_SECONDS if self.counted else REFUSED_HEADERS_SECONDS
        self.awaiting, self.deadline = "head", self.loop.call_later(seconds, self.close_late, "head",
                                                                    f"took over {seconds:g} s")

    def await_body(self) -> None:
        self.await_nothing()
        self.awaiting, self.body = "body", BodyClock(self.loop.time())
        self.deadline = self.loop.call_later(BODY_CHECK_SECONDS, self.check_body)

    def check_body(self) -> None:
        why = self.body.verdict(self.loop.time(), reading=not self.flow.read_paused)
        if why is not None:
            return self.close_late("body", why)
        self.deadline = self.loop.call_later(BODY_CHECK_SECONDS, self.check_body)

    def await_nothing(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
        self.awaiting, self.deadline, self.body = None, None, None

    def close_late(self, what: str, why: str) -> None:
        logger.info("%s:%s - closed: the request's %s %s", *(self.client or ("?", "?")), what, why)
        self.await_nothing()
        if not self.transport.is_closing():
            self.transport.close()


_last_refusal_log = {}


def refused_now(refusal, client) -> None:
    """A line for a refused connection, at most one a second for each kind: an attack makes thousands."""
    now = time.monotonic()
    if now - _last_refusal_log.get(refusal, 0.0) >= 1:
        _last_refusal_log[refusal] = now
        reason = "over its address's limit" if refusal is OVER_ADDRESS_LIMIT else "the worker is full"
        logger.warning("%s:%s - connection refused: %s (further ones this second are not logged)",
                       *(client or ("?", "?")), reason)


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

    CONFIG_KWARGS = {**UvicornWorker.CONFIG_KWARGS, "ws_per_message_deflate": False, "http": GuardedH11Protocol,
                     "h11_max_incomplete_event_size": HEADERS_MAX_BYTES, "ws_max_size": WS_MAX_BYTES}

    def init_process(self) -> None:
        raise_open_files_limit()
        super().init_process()
