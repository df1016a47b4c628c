"""A real SMTP server for the tests: aiosmtpd on a free loopback port, in a thread of the test process. The
service speaks SMTP to it as to any server; the tests read what it received, parsed as a mail client would.

The `smtp_server` fixture (tests/conftest.py) starts one, points the settings at it (Django's SMTP backend,
EMAIL_HOST, EMAIL_PORT) and makes this process's background runner do the sending (no broker, no periodic
sweep: a test runs core.tasks.sweep_emails() itself when it needs one). The test's writes commit
(transactional_db), so that the runner's threads see the e-mails they queued: after a write, a test waits for
what the server receives with `smtp_server.wait_for(count)`, never a fixed sleep.
"""

import email
import email.policy
import socket
import threading
import time
from email.message import EmailMessage

from aiosmtpd.controller import Controller

from .realtime.servers import free_port

STARTUP_SECONDS = 15


class SmtpServer:
    """`with SmtpServer() as server:` listens on 127.0.0.1:`server.port` until the block ends."""

    def __init__(self, port: int | None = None):
        self.port = port or free_port()
        self.messages: list[EmailMessage] = []
        self.envelopes: list[tuple[str, list[str]]] = []  # (MAIL FROM, RCPT TO) of each message, in order
        self.arrived = threading.Condition()
        # Its start waits for the server thread to answer, 1 s by default: too short on a busy CI machine.
        self.controller = Controller(self, hostname="127.0.0.1", port=self.port, ready_timeout=STARTUP_SECONDS)

    def __enter__(self) -> "SmtpServer":
        self.controller.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.controller.stop()

    async def handle_DATA(self, server, session, envelope) -> str:  # noqa: N802 (aiosmtpd's hook name)
        message = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
        with self.arrived:
            self.messages.append(message)
            self.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos)))
            self.arrived.notify_all()
        return "250 Message accepted for delivery"

    def wait_for(self, count: int, timeout: float = 5) -> list[EmailMessage]:
        """The first `count` messages received, once they are; AssertionError if they are not within `timeout`."""
        deadline = time.monotonic() + timeout
        with self.arrived:
            while len(self.messages) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{len(self.messages)} of {count} e-mails received in {timeout} s")
                self.arrived.wait(left)
            return self.messages[:count]


class SilentServer:
    """A port that takes connections and never says a word: an SMTP server that hangs (the client times out)."""

    def __init__(self):
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]

    def __enter__(self) -> "SilentServer":
        return self

    def __exit__(self, *exc_info) -> None:
        self.socket.close()


def text_of(message: EmailMessage) -> str:
    """The plain-text part, with its lines ended as Python's are (SMTP sends CRLF)."""
    return message.get_body(preferencelist=("plain",)).get_content().replace("\r\n", "\n")


def html_of(message: EmailMessage) -> str:
    return message.get_body(preferencelist=("html",)).get_content().replace("\r\n", "\n")
