"""The private uvicorn APIs config/workers.py lists in its docstring are still where it expects them, and still
do what it relies on: an upgrade that changes one fails here, by name, rather than as a server that silently
stops enforcing its limits. (The black-box tests of tests/security start the real worker.)"""

import asyncio
import importlib
import re

import pytest
from uvicorn.config import Config
from uvicorn.server import ServerState

from config import workers
from tests.core.test_django_internals import resolve


def listed_apis() -> list[str]:
    section = workers.__doc__.split("Private uvicorn APIs", 1)[1]
    return re.findall(r"`(uvicorn[\w.]*\.[\w.]+)`", section)


@pytest.mark.parametrize("api", listed_apis())
def test_each_listed_private_api_still_exists(api):
    module_path, _, attribute = api.rpartition(".")
    if module_path == "uvicorn.config.Config":  # an instance attribute: set by the constructor
        assert hasattr(Config(app=None), attribute), f"{api} moved: config/workers.py relies on it"
        return
    try:
        resolve(api)
    except (ImportError, AttributeError) as missing:
        pytest.fail(f"{api} moved or is gone ({missing}): update config/workers.py")


def test_the_list_names_the_protocol_and_its_parts():
    assert {"uvicorn.protocols.http.h11_impl.H11Protocol", "uvicorn.config.Config.forwarded_allow_ips",
            "uvicorn_worker.UvicornWorker.CONFIG_KWARGS"} <= set(listed_apis())
    assert importlib.import_module("uvicorn_worker").UvicornWorker.CONFIG_KWARGS["http"] == "auto"


class Transport(asyncio.Transport):
    """A client at 10.1.2.3 whose bytes the test hands to the protocol, and what the protocol writes back."""

    def __init__(self):
        super().__init__()
        self.written, self.closing, self.reading = b"", False, True

    def get_extra_info(self, name, default=None):
        return {"peername": ("10.1.2.3", 50000), "sockname": ("127.0.0.1", 8000)}.get(name, default)

    def write(self, data):
        self.written += data

    def close(self):
        self.closing = True

    def is_closing(self):
        return self.closing

    def pause_reading(self):
        self.reading = False

    def resume_reading(self):
        self.reading = True

    def set_protocol(self, protocol):
        self.protocol = protocol


async def served_by(app, request: bytes) -> tuple[workers.GuardedH11Protocol, Transport, list]:
    """A request handed to the protocol as uvicorn's server would, with `app` as the protocol's `app`."""
    config = Config(app=app, http=workers.GuardedH11Protocol, lifespan="off", proxy_headers=False)
    config.load()
    protocol = workers.GuardedH11Protocol(config=config, server_state=ServerState(), app_state={})
    transport = Transport()
    protocol.connection_made(transport)
    seen = []
    original = protocol.app

    async def recording(scope, receive, send):
        seen.append(scope["client"])
        await original(scope, receive, send)

    protocol.app = recording  # what a refused connection's requests run instead
    protocol.data_received(request)
    for _ in range(100):  # the request runs as a task of the loop: 1 s at most
        if transport.written.endswith(b"{}"):
            break
        await asyncio.sleep(0.01)
    protocol.connection_lost(None)
    return protocol, transport, seen


async def ok(scope, receive, send):
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"{}"})


def test_a_request_runs_the_protocol_s_app_with_the_client_its_transport_names():
    _, transport, seen = asyncio.run(served_by(ok, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
    assert seen == [("10.1.2.3", 50000)], "H11Protocol.app or .client changed: config/workers.py relies on them"
    assert transport.written.startswith(b"HTTP/1.1 200")


def test_the_parts_the_deadlines_read_are_there_once_connected():
    async def connected():
        config = Config(app=ok, http=workers.GuardedH11Protocol, lifespan="off")
        config.load()
        protocol = workers.GuardedH11Protocol(config=config, server_state=ServerState(), app_state={})
        protocol.connection_made(Transport())
        parts = (protocol.flow.read_paused, protocol.conn.their_state, protocol.loop, protocol.awaiting,
                 config.forwarded_allow_ips)
        protocol.connection_lost(None)
        return parts

    read_paused, state, loop, awaiting, trusted = asyncio.run(connected())
    assert (read_paused, state.__name__, isinstance(loop, asyncio.AbstractEventLoop), awaiting) == (
        False, "IDLE", True, "head")
    assert trusted  # gunicorn's and uvicorn's default: 127.0.0.1
