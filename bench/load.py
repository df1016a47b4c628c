"""Servers on 127.0.0.1 and a keep-alive HTTP load generator, for the throughput figures."""

import asyncio
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.realtime.servers import free_port

ROOT = Path(__file__).resolve().parent.parent
STARTUP_SECONDS = 60


class Servers:
    """`kind` ("daphne" or "gunicorn") serving config.asgi in `processes` processes: daphne has no
    workers, so it runs one process per port and the load generator spreads its connections over them
    as a proxy would; gunicorn forks workers of `worker_class` (the Procfile's by default) that share one
    port."""

    def __init__(self, kind: str, env: dict[str, str], processes: int = 2, worker_class: str = "config.workers.Worker"):
        self.kind, self.processes, self.worker_class = kind, processes, worker_class
        self.env = {**os.environ, "DJANGO_SECURE_SSL_REDIRECT": "0", "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
                    "DJANGO_SETTINGS_MODULE": "bench.settings", "DJANGO_DEBUG": "0", **env}
        self.ports = [free_port() for _ in range(processes if kind == "daphne" else 1)]
        self.started = []

    def __enter__(self) -> "Servers":
        self.log = tempfile.TemporaryFile()
        if self.kind == "daphne":
            commands = [[sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "config.asgi:application"]
                        for port in self.ports]
        else:
            commands = [[sys.executable, "-m", "gunicorn", "-w", str(self.processes), "-k", self.worker_class,
                         "-b", f"127.0.0.1:{self.ports[0]}", "--log-level", "warning", "config.asgi:application"]]
        for command in commands:
            self.started.append(subprocess.Popen(command, cwd=ROOT, env=self.env, stdout=self.log,
                                                 stderr=subprocess.STDOUT))
        deadline = time.monotonic() + STARTUP_SECONDS
        for port in self.ports:
            while not asyncio.run(_answers(port)):
                if time.monotonic() > deadline or any(p.poll() is not None for p in self.started):
                    self.__exit__()
                    self.log.seek(0)
                    raise RuntimeError(f"{self.kind} did not start:\n{self.log.read().decode(errors='replace')}")
                time.sleep(0.2)
        return self

    def __exit__(self, *exc_info) -> None:
        for process in self.started:
            process.terminate()
        for process in self.started:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.log.close()


async def _answers(port: int) -> bool:
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        status, _ = await Connection(reader, writer).request("GET", "/bench/trivial", {})
        writer.close()
    except (OSError, asyncio.IncompleteReadError):
        return False
    return status == 200


class Connection:
    """One keep-alive HTTP/1.1 connection."""

    def __init__(self, reader, writer):
        self.reader, self.writer = reader, writer

    async def request(self, method: str, path: str, headers: dict, body: bytes = b"") -> tuple[int, bytes]:
        lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", f"Content-Length: {len(body)}",
                 *(f"{name}: {value}" for name, value in headers.items())]
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = 0
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":", 1)[1])
        return status, await self.reader.readexactly(length)


async def _balanced_connections(servers: Servers, clients: int) -> list[Connection]:
    """`clients` keep-alive connections, as many on each server process as on the others.

    Left to the kernel, a burst of connections to gunicorn's one port often lands on one worker, which
    then serves everything while the other idles. Like a proxy spreading its upstream connections, a
    connection is kept only while its process (the trivial view tells its pid) holds less than its share.
    The attempts go on for up to STARTUP_SECONDS: a worker still starting (gunicorn's workers answer once
    each has loaded the application, the first one alone when the server is first seen answering) takes none.
    """
    share = -(-clients // servers.processes)
    kept, per_process = [], {}
    deadline = time.monotonic() + STARTUP_SECONDS
    for attempt in itertools.count():
        if len(kept) == clients or time.monotonic() > deadline:
            break
        reader, writer = await asyncio.open_connection("127.0.0.1", servers.ports[attempt % len(servers.ports)])
        connection = Connection(reader, writer)
        _, body = await connection.request("GET", "/bench/trivial", {})
        pid = json.loads(body)["pid"]
        if per_process.get(pid, 0) < share:
            per_process[pid] = per_process.get(pid, 0) + 1
            kept.append(connection)
        else:
            writer.close()
    if len(kept) == clients:
        return kept
    raise RuntimeError(f"could not spread {clients} connections over {servers.processes} processes: {per_process}")


async def _client(connection: Connection, make_request, until: float, stats: dict, limit: int) -> None:
    try:
        while time.perf_counter() < until and stats["done"] < limit:
            method, path, headers, body = make_request()
            status, _ = await connection.request(method, path, headers, body)
            stats["done"] += 1
            stats["statuses"][status] = stats["statuses"].get(status, 0) + 1
    finally:
        connection.writer.close()


def hammer(servers: Servers, make_request, *, clients: int, seconds: float, limit: int = 10**9) -> dict:
    """`clients` connections, spread evenly over the server's processes, sending requests back to back for
    `seconds` at most (and `limit` requests in all); answers requests per second and the statuses seen."""
    stats = {"done": 0, "statuses": {}}

    async def run():
        connections = await _balanced_connections(servers, clients)
        started = time.perf_counter()
        await asyncio.gather(*(_client(connection, make_request, started + seconds, stats, limit)
                               for connection in connections))
        return time.perf_counter() - started

    elapsed = asyncio.run(run())
    return {"per_second": stats["done"] / elapsed, **stats}
