"""Soak (issue 15, item 10): two Procfile server processes (WEB_CONCURRENCY=1 each, two ports) on
PostgreSQL and Redis, held at 70% of the maximum load measured in a short ramp for SOAK_SECONDS
(default 900) with mixed reads, writes (creates beyond 20 per client delete the oldest, so the board
keeps its size and memory growth shows leaks, not data), uploads and websocket board viewers. Reports errors (goal 0),
the RSS growth of each server's process tree from the warm start of the hold to its end (goal < 10%) and the
PostgreSQL connections to the soak database (max). Traffic goes to 127.0.0.1 only.

    python -m bench.soak                       # 15 minutes
    SOAK_SECONDS=240 python -m bench.soak      # a shorter run
    SOAK_RATE=120 python -m bench.soak         # skip the ramp: hold 120 requests/s

Environment: SOAK_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/tracker_soak, dropped and
created anew), SOAK_REDIS_URL (default redis://127.0.0.1:6379/12), SOAK_CLIENTS (16), SOAK_VIEWERS (10),
SOAK_RAMP_SECONDS (20). Exit status 1 when the goals are missed.
"""

import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
from websockets.asyncio.client import connect

from tests.realtime.servers import ROOT, ApiClient
from tests.security.procfile import ProcfileServer

DATABASE_URL = os.environ.get("SOAK_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/tracker_soak")
REDIS_URL = os.environ.get("SOAK_REDIS_URL", "redis://127.0.0.1:6379/12")
SECONDS = int(os.environ.get("SOAK_SECONDS", "900"))
CLIENTS = int(os.environ.get("SOAK_CLIENTS", "16"))
VIEWERS = int(os.environ.get("SOAK_VIEWERS", "10"))
RAMP_SECONDS = int(os.environ.get("SOAK_RAMP_SECONDS", "20"))
SHARE_OF_MAX = 0.7
SAMPLE_SECONDS = 2
UPLOAD = b"a line of a soak upload\n" * 2731  # one 64 KiB text file per upload
STATUSES = ["backlog", "todo", "in_progress", "review", "done"]
KEPT_PER_CLIENT = 20  # beyond that a client deletes its oldest ticket: the board stays one size


def recreate_database() -> str:
    name = urlsplit(DATABASE_URL).path.lstrip("/")
    admin_url = DATABASE_URL.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin_url, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')
    return name


def manage(env: dict, *args: str) -> str:
    result = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env={**os.environ, **env}, check=True,
                            capture_output=True, text=True)
    return result.stdout.strip().splitlines()[-1]


def tree_rss_mib(pid: int) -> float:
    """VmRSS of a process and all its descendants (gunicorn's master and its worker)."""
    total, pending = 0.0, [pid]
    while pending:
        current = pending.pop()
        try:
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) / 1024
            for task in Path(f"/proc/{current}/task").iterdir():
                pending += [int(child) for child in (task / "children").read_text().split()]
        except FileNotFoundError:
            continue
    return total


class Tally:
    def __init__(self):
        self.lock = threading.Lock()
        self.answers: Counter = Counter()
        self.errors: list[str] = []

    def record(self, operation: str, status: int | None, detail: str = "") -> None:
        with self.lock:
            self.answers[operation] += 1
            if status is None or not 200 <= status < 300:
                self.errors.append(f"{operation}: {status} {detail[:200]}")

    @property
    def total(self) -> int:
        return sum(self.answers.values())


class Client(threading.Thread):
    """One keep-alive connection doing the mix until `until`, paced to `rate` requests/s (None: flat out).
    It moves and uploads to the tickets it created, so no two clients race on one ticket."""

    MIX = [("board", 25), ("list", 15), ("detail", 20), ("create", 10), ("move", 15), ("comment", 10),
           ("upload", 5)]

    def __init__(self, index: int, url: str, token: str, project_id: int, tally: Tally, until: float,
                 rate: float | None):
        super().__init__(daemon=True)
        self.api, self.token, self.url = ApiClient(url, token), token, url
        self.base, self.tally, self.until, self.rate = f"/api/v1/projects/{project_id}", tally, until, rate
        self.chance, self.mine = random.Random(index), []  # (number, id) of the tickets it created
        self.operations = [name for name, weight in self.MIX for _ in range(weight)]

    def run(self) -> None:
        next_at = time.monotonic()
        while time.monotonic() < self.until:
            if self.rate:
                next_at += 1 / self.rate
                time.sleep(max(0.0, next_at - time.monotonic()))
            operation = self.chance.choice(self.operations) if self.mine else "create"
            try:
                status, detail = self.perform(operation)
            except OSError as error:
                status, detail = None, repr(error)
            self.tally.record(operation, status, detail)
        self.api.close()

    def perform(self, operation: str) -> tuple[int, str]:
        number, ticket_id = self.chance.choice(self.mine) if self.mine else (None, None)
        if operation == "board":
            status, body = self.api.request("GET", f"{self.base}/board")
        elif operation == "list":
            status, body = self.api.request("GET", f"{self.base}/tickets")
        elif operation == "detail":
            status, body = self.api.request("GET", f"{self.base}/tickets/{number}")
        elif operation == "create":
            status, body = self.api.request("POST", f"{self.base}/tickets", {"title": f"Soak {uuid.uuid4().hex[:8]}"})
            if status == 201:
                created = int(body["ticket_ref"].rsplit("-", 1)[1])
                _, detail = self.api.request("GET", f"{self.base}/tickets/{created}")
                self.mine.append((created, detail["ticket"]["id"]))
                if len(self.mine) > KEPT_PER_CLIENT:
                    oldest, _ = self.mine.pop(0)
                    deleted, answer = self.api.request("POST", f"{self.base}/tickets/{oldest}/delete")
                    self.tally.record("delete", deleted, json.dumps(answer))
        elif operation == "move":
            status, body = self.api.request("POST", f"{self.base}/tickets/{number}/move",
                                            {"status": self.chance.choice(STATUSES)})
        elif operation == "comment":
            status, body = self.api.request("POST", f"{self.base}/tickets/{number}/comments", {"comment": "Soaking"})
        else:
            status, body = self.upload(ticket_id)
        return status, "" if 200 <= status < 300 else json.dumps(body)

    def upload(self, ticket_id: int) -> tuple[int, dict | None]:
        boundary = uuid.uuid4().hex
        payload = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"files[]\"; filename=\"soak.txt\"\r\n"
                   f"Content-Type: text/plain\r\n\r\n").encode() + UPLOAD + f"\r\n--{boundary}--\r\n".encode()
        connection = self.api.connection
        connection.request("POST", f"/api/v1/tickets/{ticket_id}/attachments", body=payload, headers={
            "Authorization": f"Bearer {self.token}", "Content-Type": f"multipart/form-data; boundary={boundary}"})
        response = connection.getresponse()
        raw = response.read()
        try:
            return response.status, json.loads(raw)
        except ValueError:
            return response.status, None


class Viewers(threading.Thread):
    """Board websockets spread over the servers, open until `until`; counts frames and unexpected closes."""

    def __init__(self, ws_urls: list[str], token: str, project_id: int, tally: Tally, until: float):
        super().__init__(daemon=True)
        self.ws_urls, self.token, self.project_id, self.tally, self.until = ws_urls, token, project_id, tally, until
        self.frames = 0

    def run(self) -> None:
        asyncio.run(self.watch_all())

    async def watch_all(self) -> None:
        await asyncio.gather(*(self.watch(self.ws_urls[index % len(self.ws_urls)]) for index in range(VIEWERS)))

    async def watch(self, ws_url: str) -> None:
        try:
            async with connect(f"{ws_url}/ws/v1/projects/{self.project_id}/board/", open_timeout=10,
                               additional_headers={"Authorization": f"Bearer {self.token}"}) as socket:
                while (left := self.until - time.monotonic()) > 0:
                    try:
                        await asyncio.wait_for(socket.recv(), timeout=left)
                        self.frames += 1
                    except TimeoutError:
                        break
        except Exception as error:  # a refused handshake or a closed socket: an error of the soak
            self.tally.record("websocket", None, repr(error))


class Sampler(threading.Thread):
    def __init__(self, servers: list[ProcfileServer], database: str):
        super().__init__(daemon=True)
        self.servers, self.database, self.stop = servers, database, threading.Event()
        self.rss: list[list[float]] = []
        self.connections: list[int] = []

    def run(self) -> None:
        with psycopg.connect(DATABASE_URL, autocommit=True) as connection:
            while not self.stop.is_set():
                self.rss.append([tree_rss_mib(server.pid) for server in self.servers])
                count = connection.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s",
                                           [self.database]).fetchone()[0]
                self.connections.append(count - 1)  # not this sampler's own
                self.stop.wait(SAMPLE_SECONDS)


def average(samples: list[list[float]]) -> list[float]:
    return [sum(values) / len(values) for values in zip(*samples, strict=True)]


def run_clients(servers, token, project_id, tally, seconds: float, rate: float | None) -> float:
    until = time.monotonic() + seconds
    clients = [Client(index, servers[index % len(servers)].url, token, project_id, tally, until,
                      rate / CLIENTS if rate else None) for index in range(CLIENTS)]
    started = time.monotonic()
    for client in clients:
        client.start()
    for client in clients:
        client.join()
    return time.monotonic() - started


def main() -> int:
    database = recreate_database()
    media = tempfile.mkdtemp(prefix="soak-media-")
    env = {"DATABASE_URL": DATABASE_URL, "REDIS_URL": REDIS_URL, "MEDIA_ROOT": media, "WEB_CONCURRENCY": "1",
           "DJANGO_DEBUG": "0", "API_RATE_LIMIT_PER_MINUTE": "100000000",
           "API_USER_RATE_LIMIT_PER_MINUTE": "100000000"}
    manage(env, "migrate", "--no-input")
    manage(env, "createuser", "soak", "--password", uuid.uuid4().hex)
    token = manage(env, "issuetoken", "soak")

    with ProcfileServer(env) as first, ProcfileServer(env) as second:
        servers = [first, second]
        setup = ApiClient(first.url, token)
        project_id = setup.request("POST", "/api/v1/projects", {"name": "Soak", "prefix": "SOAK"})[1]["project"]["id"]
        setup.close()

        if rate := float(os.environ.get("SOAK_RATE", "0")):
            print(f"hold rate given: {rate:.0f} requests/s")
        else:
            ramp = Tally()
            elapsed = run_clients(servers, token, project_id, ramp, RAMP_SECONDS, None)
            maximum = ramp.total / elapsed
            rate = SHARE_OF_MAX * maximum
            print(f"ramp: {ramp.total} requests in {elapsed:.1f} s flat out with {CLIENTS} clients = "
                  f"{maximum:.0f} requests/s ({len(ramp.errors)} errors); holding {rate:.0f} requests/s")

        tally, sampler = Tally(), Sampler(servers, database)
        viewers = Viewers([first.ws_url, second.ws_url], token, project_id, tally, time.monotonic() + SECONDS)
        viewers.start()
        sampler.start()
        elapsed = run_clients(servers, token, project_id, tally, SECONDS, rate)
        sampler.stop.set()
        sampler.join()
        viewers.join(timeout=15)
        logs = [server.output() for server in servers]

    # The baseline is taken once the processes are warm (connection pools filled, allocator arenas at
    # their working size): 60 s into the hold, or a quarter of a shorter one; each end averages 3 samples.
    warm = min(60, SECONDS // 4) // SAMPLE_SECONDS
    start, end = average(sampler.rss[warm:warm + 3]), average(sampler.rss[-3:])
    growth = [100 * (after - before) / before for before, after in zip(start, end, strict=True)]
    print(f"hold: {tally.total} requests in {elapsed:.0f} s = {tally.total / elapsed:.1f} requests/s; "
          f"{viewers.frames} websocket frames to {VIEWERS} viewers; mix {dict(tally.answers)}")
    print(f"errors: {len(tally.errors)}")
    for error in tally.errors[:20]:
        print(f"  {error}")
    for index, (before, after, change) in enumerate(zip(start, end, growth, strict=True)):
        print(f"server {index + 1} RSS (master + worker): {before:.1f} MiB -> {after:.1f} MiB ({change:+.1f}%)")
    # A slope or a plateau: the RSS at each fifth of the hold, with the pooled connections then open.
    fifths = [min(len(sampler.rss) - 1, len(sampler.rss) * part // 5) for part in range(6)]
    print("RSS by fifth of the hold (MiB): " + "; ".join(
        f"{'/'.join(f'{rss:.0f}' for rss in sampler.rss[at])} ({sampler.connections[at]} PostgreSQL connections)"
        for at in fifths))
    print(f"PostgreSQL connections to {database}: max {max(sampler.connections)}, "
          f"last {sampler.connections[-1]} (samples every {SAMPLE_SECONDS} s)")
    tracebacks = sum(log.count("Traceback") for log in logs)
    print(f"tracebacks in the server logs: {tracebacks}")
    return 0 if not tally.errors and not tracebacks and max(growth) < 10 else 1


if __name__ == "__main__":
    sys.exit(main())
