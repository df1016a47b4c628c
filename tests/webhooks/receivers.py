"""Receivers of webhook deliveries for the tests: threaded HTTP servers on 127.0.0.1 that record what
they receive and answer as the test says."""

import http.server
import json
import select
import selectors
import socket
import ssl
import threading
import time
from dataclasses import dataclass, field

import standardwebhooks


class _Server(http.server.ThreadingHTTPServer):
    # socketserver's listen backlog is 5: a sender with up to 32 attempts in flight to one endpoint
    # (webhooks/sender.py, ENDPOINT_CEILING) overflowed it on a loaded machine, and a connection the kernel
    # dropped failed an attempt that never reached the receiver.
    request_queue_size = 128


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]  # names in lower case
    body: bytes
    at: float = field(default_factory=time.monotonic)  # when it arrived

    @property
    def message_id(self) -> str:
        return self.headers["webhook-id"]

    def frame(self) -> dict:
        return json.loads(self.body)

    def verified(self, secret: str) -> dict:
        """The body, once its signature checks out with `secret` (standardwebhooks raises otherwise)."""
        return standardwebhooks.Webhook(secret).verify(self.body, self.headers)


@dataclass(frozen=True)
class Answer:
    status: int = 200
    body: bytes = b"ok"
    headers: tuple[tuple[str, str], ...] = ()
    hang: bool = False  # read the request, then never answer (until the receiver closes)
    drip_seconds: float = 0  # send the body one byte at a time, this long apart


class Receiver:
    """`with Receiver() as receiver:` listens on `receiver.url` until the block ends. `answers` are used in
    turn, the last one for every request after them."""

    def __init__(self, *answers: Answer, tls: ssl.SSLContext | None = None):
        self.answers = list(answers) or [Answer()]
        self.received: list[Received] = []
        self.hanging = self.most_hanging = 0  # requests held without an answer, now and at most at once
        self.changed = threading.Condition()
        self.closing = threading.Event()
        self.server = _Server(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks"
        self.server_names: list[str | None] = []  # the TLS server name each client asked for
        if tls is not None:
            tls.sni_callback = lambda _socket, name, _context: self.server_names.append(name)
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
            self.url = self.url.replace("http://", "https://")

    def __enter__(self) -> "Receiver":
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.closing.set()
        self.server.shutdown()
        self.server.server_close()

    def wait_for(self, count: int, timeout: float = 10) -> list[Received]:
        """The first `count` requests, once they have all arrived (AssertionError after `timeout`)."""
        self.wait_until(lambda received: len(received) >= count, timeout,
                        lambda: f"{len(self.received)} of {count} deliveries arrived within {timeout} s")
        return list(self.received[:count])

    def wait_until(self, condition, timeout: float, failure=lambda: "not within the time") -> None:
        """Until `condition(requests received so far)` holds (AssertionError with `failure()` after `timeout`)."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while not condition(self.received):
                left = deadline - time.monotonic()
                assert left > 0, failure()
                self.changed.wait(left)

    def _hang(self, connection: socket.socket) -> None:
        """Answer nothing until the sender hangs up (or the receiver closes)."""
        with self.changed:
            self.hanging += 1
            self.most_hanging = max(self.most_hanging, self.hanging)
        # Woken the moment the sender hangs up (not at the next tick): its next attempt must not find this one
        # still counted.
        while not self.closing.is_set():
            if select.select([connection], [], [], 0.05)[0] and not connection.recv(4096):
                break
        with self.changed:
            self.hanging -= 1

    def _answer_for(self, index: int) -> Answer:
        return self.answers[min(index, len(self.answers) - 1)]

    def _handler(self):
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with receiver.changed:
                    index = len(receiver.received)
                    receiver.received.append(Received(
                        self.path, {name.lower(): value for name, value in self.headers.items()}, body))
                    receiver.changed.notify_all()
                answer = receiver._answer_for(index)
                if answer.hang:
                    receiver._hang(self.connection)
                    return
                try:
                    self._send(answer)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the sender read what it keeps and hung up

            def _send(self, answer: Answer):
                self.send_response(answer.status)
                for name, value in answer.headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer.body)))
                self.send_header("Connection", "close")
                self.end_headers()
                if not answer.drip_seconds:
                    self.wfile.write(answer.body)
                    return
                for byte in answer.body:
                    if receiver.closing.wait(answer.drip_seconds):
                        return
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()

            def log_message(self, format, *args):
                pass

        return Handler


class HangingEndpoints:
    """`with HangingEndpoints(count) as hung:` `count` endpoints on 127.0.0.1 (`hung.urls`) that take every
    connection and read what is sent, and never answer, until the block ends; all on one thread.
    `hung.connections` counts the connections taken so far."""

    def __init__(self, count: int):
        self.selector = selectors.DefaultSelector()
        self.listeners = [socket.create_server(("127.0.0.1", 0), backlog=64) for _ in range(count)]
        self.urls = [f"http://127.0.0.1:{listener.getsockname()[1]}/hooks" for listener in self.listeners]
        self.connections = 0
        self.closing = threading.Event()
        for listener in self.listeners:
            listener.setblocking(False)
            self.selector.register(listener, selectors.EVENT_READ, "listener")
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> "HangingEndpoints":
        self.thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.closing.set()
        self.thread.join(timeout=5)
        for key in list(self.selector.get_map().values()):
            key.fileobj.close()
        self.selector.close()

    def _serve(self) -> None:
        while not self.closing.is_set():
            for key, _ in self.selector.select(timeout=0.05):
                if key.data == "listener":
                    try:
                        connection, _ = key.fileobj.accept()
                    except BlockingIOError:
                        continue
                    connection.setblocking(False)
                    self.selector.register(connection, selectors.EVENT_READ, "connection")
                    self.connections += 1
                elif not self._drain(key.fileobj):
                    self.selector.unregister(key.fileobj)
                    key.fileobj.close()

    @staticmethod
    def _drain(connection: socket.socket) -> bool:
        """Read what came; False once the sender hung up."""
        try:
            return bool(connection.recv(65536))
        except BlockingIOError:
            return True
        except OSError:
            return False
