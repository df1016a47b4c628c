"""One HTTP exchange with a webhook's endpoint, on the sender's event loop (webhooks/sender.py), within one
deadline, reading no more than it keeps.

The host is resolved and every address checked at each attempt (webhooks/addresses.py); the connection
goes to a checked address, with the URL's host in the Host header and, for https, as the TLS server
name whose certificate is verified. Redirects are answers like any other (never followed). One deadline
covers resolving, connecting, the TLS handshake, sending and reading together, however slowly the other
side drips its bytes. Waiting costs a socket and a coroutine, never a thread.
"""

import asyncio
import codecs
import ssl
import time
from concurrent.futures import Executor
from dataclasses import dataclass
from enum import StrEnum
from functools import cache

import h11

from .addresses import AddressRefused, IPAddress, Target, resolve, target_of

RESPONSE_BODY_CHARS = 1024
# Bytes of an answer's body read at most: 1,024 characters of UTF-8 fit in them. Its headers may take
# up to HEADER_BYTES more; one receive reads at most RECEIVE_BYTES.
BODY_BYTES = 4 * RESPONSE_BODY_CHARS
HEADER_BYTES = 16 * 1024
RECEIVE_BYTES = 4096
USER_AGENT = "tracker-webhooks/1.0"


class Failure(StrEnum):
    """Why an exchange brought no answer."""

    ADDRESS = "address"  # the URL or the address its host stands for is refused, or it does not resolve
    TIMEOUT = "timeout"
    CONNECTION = "connection"  # refused, reset, closed early, not HTTP, TLS failed
    SECRET = "secret"  # nothing was sent: the signing secret cannot be read with this DJANGO_SECRET_KEY


@dataclass(frozen=True)
class Exchange:
    status: int | None  # the answer's status, None when there was none
    body: str | None  # its first RESPONSE_BODY_CHARS characters
    failure: Failure | None
    error: str  # what went wrong, for people ("" when an answer came)
    duration_ms: int


async def post(url: str, *, body: bytes, headers: dict[str, str], timeout: float, resolver: Executor) -> Exchange:
    """POST `body` to `url` with `headers` (and Content-Type: application/json); the answer or the failure.
    Host lookups run on `resolver`'s threads (getaddrinfo cannot be given a timeout)."""
    started = time.monotonic()
    answer = _Answer()
    try:
        async with asyncio.timeout(timeout):
            target = target_of(url)
            reader, writer = await _connect(target, await resolve(target, resolver))
            try:
                await _exchange(reader, writer, target, body, headers, answer)
            finally:
                if answer.complete:
                    writer.close()
                else:  # nothing lingers: a connection left mid-answer is dropped, not shut down politely
                    writer.transport.abort()
    except AddressRefused as refused:
        return _failed(Failure.ADDRESS, str(refused), started)
    except (TimeoutError, h11.RemoteProtocolError, OSError) as error:  # TLS errors included (ssl.SSLError)
        if answer.status is None:
            return _failed(*_failure_of(error, timeout), started)
        # else the status came in time, and the body's end is what failed: the answer stands
    except (h11.LocalProtocolError, ValueError) as error:  # a request h11 cannot write: a failed attempt all the same
        return _failed(Failure.CONNECTION, f"the request could not be sent: {error}", started)
    return Exchange(status=answer.status, body=answer.text(), failure=None, error="", duration_ms=_elapsed_ms(started))


def _failure_of(error: Exception, timeout: float) -> tuple[Failure, str]:
    if isinstance(error, TimeoutError):
        return Failure.TIMEOUT, f"no complete answer within {timeout:g} s"
    if isinstance(error, ssl.SSLError):
        return Failure.CONNECTION, f"TLS failed: {error.reason or error}"
    if isinstance(error, h11.RemoteProtocolError):
        return Failure.CONNECTION, f"not a valid HTTP answer: {error}"
    return Failure.CONNECTION, f"connection failed: {getattr(error, 'strerror', None) or error}"


def unsent(failure: Failure, error: str) -> Exchange:
    """The exchange that did not take place."""
    return _failed(failure, error, time.monotonic())


def _failed(failure: Failure, error: str, started: float) -> Exchange:
    return Exchange(status=None, body=None, failure=failure, error=error[:300], duration_ms=_elapsed_ms(started))


def _elapsed_ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)


@cache
def _tls_context() -> ssl.SSLContext:
    return ssl.create_default_context()


async def _connect(target: Target, addresses: list[IPAddress]) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection to the first checked address that answers, in TLS for https (with the URL's host as
    the server name and the name the certificate must carry)."""
    error: OSError = ConnectionError("no address to connect to")
    tls = {"ssl": _tls_context(), "server_hostname": target.host} if target.scheme == "https" else {}
    for address in addresses:
        try:
            return await asyncio.open_connection(str(address), target.port, limit=RECEIVE_BYTES, **tls)
        except ssl.SSLError:
            raise  # the address answered: its certificate is what failed
        except OSError as failure:
            error = failure
    raise error


class _Answer:
    """What has arrived of the answer so far."""

    def __init__(self):
        self.status: int | None = None
        self.body = bytearray()
        self.complete = False

    def text(self) -> str:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        # A character cut by the read limit is left out, not shown as a replacement.
        return decoder.decode(bytes(self.body[:BODY_BYTES]), final=self.complete)[:RESPONSE_BODY_CHARS]


async def _exchange(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, target: Target, body: bytes,
                    headers: dict[str, str], answer: _Answer) -> None:
    http = h11.Connection(h11.CLIENT, max_incomplete_event_size=HEADER_BYTES)
    request = h11.Request(method="POST", target=target.path, headers=[
        ("Host", target.host_header), ("User-Agent", USER_AGENT), ("Content-Type", "application/json"),
        ("Content-Length", str(len(body))), ("Connection", "close"), *headers.items()])
    writer.write(http.send(request) + http.send(h11.Data(data=body)) + http.send(h11.EndOfMessage()))
    await writer.drain()
    while True:
        event = http.next_event()
        if event is h11.NEED_DATA:
            http.receive_data(await reader.read(RECEIVE_BYTES))
        elif isinstance(event, h11.Response):
            answer.status = event.status_code
        elif isinstance(event, h11.Data):
            answer.body += event.data
            if len(answer.body) >= BODY_BYTES:
                return
        elif isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
            answer.complete = True
            return
