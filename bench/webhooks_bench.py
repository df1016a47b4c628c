"""Webhook deliveries: how many per second one Procfile worker process sends to a fast local receiver, and the time
from a write's commit to the receiver's first byte with 100 endpoints.

The receiver (asyncio, in a process of its own) answers 204 at once and stamps the first byte of each request with
the wall clock; the writer stamps the commit (its first on-commit callback, before the hand-out's). Endpoints are
paths of that one receiver (`/hooks/N`), so that each is an endpoint of its own to the sender. BENCH_SMALL=1:
SQLite and the web process's own sender instead of Celery on Redis.
"""

import asyncio
import json
import multiprocessing
import os
import queue
import socket
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ANSWER = b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


def serve(port: int, arrivals) -> None:
    """The receiver's process: answers 204 to every POST and puts (path, seq, first byte's time) on `arrivals`."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            first_byte = time.time()
            lines = head.split(b"\r\n")
            length = next(int(line.split(b":")[1]) for line in lines if line.lower().startswith(b"content-length:"))
            body = await reader.readexactly(length)
            writer.write(ANSWER)
            await writer.drain()
            arrivals.put((lines[0].split(b" ")[1].decode(), json.loads(body).get("seq"), first_byte))
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=1024, reuse_address=True)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


class ReceiverProcess:
    def __enter__(self) -> "ReceiverProcess":
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        context = multiprocessing.get_context("spawn")
        self.arrivals = context.Queue()
        self.process = context.Process(target=serve, args=(self.port, self.arrivals), daemon=True)
        self.process.start()
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the receiver did not start"
                time.sleep(0.05)
        return self

    def url(self, endpoint: int) -> str:
        return f"http://127.0.0.1:{self.port}/hooks/{endpoint}"

    def __exit__(self, *exc_info) -> None:
        self.process.kill()
        self.process.join()

    def collect(self, expected: set, timeout: float) -> dict:
        """{(path, seq): first byte's time} for each of `expected`, as they arrive."""
        seen, deadline = {}, time.monotonic() + timeout
        while not expected <= seen.keys():
            try:
                path, seq, first_byte = self.arrivals.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                raise AssertionError(f"{len(expected - seen.keys())} of {len(expected)} deliveries missing") from None
            seen.setdefault((path, seq), first_byte)
        return seen


class Worker:
    """The Procfile's worker: line, against the benchmark's database and Redis."""

    def __init__(self, env: dict[str, str]):
        line = next(line for line in (ROOT / "Procfile").read_text().splitlines() if line.startswith("worker:"))
        self.command, self.env = line.removeprefix("worker:").strip(), {**os.environ, **env}

    def __enter__(self) -> "Worker":
        self.log = tempfile.NamedTemporaryFile(prefix="bench-worker-")
        self.process = subprocess.Popen(["bash", "-c", f"exec {self.command}"], cwd=ROOT, env=self.env,
                                        stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 30
        while b" ready." not in Path(self.log.name).read_bytes():
            assert self.process.poll() is None and time.monotonic() < deadline, Path(self.log.name).read_text()
            time.sleep(0.1)
        return self

    def cpu_seconds(self) -> float:
        """The worker's CPU time so far (user and system), from /proc."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def __exit__(self, *exc_info) -> None:
        os.killpg(self.process.pid, 15)
        self.process.wait(timeout=30)
        self.log.close()


def stamped_creation(project, actor, title: str) -> tuple[int, float]:
    """A ticket created (one event, numbered in its transaction): its seq and its commit's time."""
    from django.db import transaction

    from projects.models import Project
    from tickets.services import create_ticket

    moment = {}
    with transaction.atomic():
        transaction.on_commit(lambda: moment.setdefault("at", time.time()))  # first: before the hand-out
        create_ticket(project=project, actor=actor, title=title)
    return Project.objects.values_list("board_seq", flat=True).get(pk=project.pk), moment["at"]


def tagged_burst(project, actor, count: int) -> tuple[set, float]:
    """`count` events committed at once (a tag taken off count - 1 tickets): their seqs and the commit's time."""
    from django.db import transaction

    from projects.models import Project, Tag
    from tickets.models import Ticket
    from tickets.services import delete_tag

    status = project.statuses.order_by("sort_order").first()
    first = Project.objects.advance_counters(project.pk, last_ticket_number=count - 1)["last_ticket_number"] - count + 2
    tickets = Ticket.objects.bulk_create(Ticket(project=project, number=first + n, title=f"Burst {n}", status=status,
                                                created_by=actor) for n in range(count - 1))
    tag = Tag.objects.create(project=project, name=f"burst-{first}")
    tag.tickets.add(*tickets)
    before = Project.objects.values_list("board_seq", flat=True).get(pk=project.pk)
    moment = {}
    with transaction.atomic():
        transaction.on_commit(lambda: moment.setdefault("at", time.time()))
        delete_tag(tag=tag, actor=actor)
    return set(range(before + 1, before + count + 1)), moment["at"]


def percentile(values: list[float], share: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[round(share * 100) - 1]


def projects_with_endpoints(actor, receiver: ReceiverProcess, endpoints: int) -> list[tuple[object, range]]:
    """Projects holding `endpoints` endpoints between them (at most 20 each, MAX_WEBHOOKS_PER_PROJECT): each
    project with the range of endpoint numbers it has."""
    from projects.services import create_project
    from webhooks.services import MAX_WEBHOOKS_PER_PROJECT, create_webhook

    projects = []
    for start in range(0, endpoints, MAX_WEBHOOKS_PER_PROJECT):
        project = create_project(owner=actor, name=f"Webhooks {time.time():.0f} {start}", prefix="WH")
        numbers = range(start, min(start + MAX_WEBHOOKS_PER_PROJECT, endpoints))
        for endpoint in numbers:
            create_webhook(project=project, actor=actor, url=receiver.url(endpoint), events=["*"])
        projects.append((project, numbers))
    return projects


def burst_rate(actor, receiver: ReceiverProcess, *, events: int, endpoints: int, worker: Worker | None) -> dict:
    """Deliveries per second of `events` committed at once, each to `endpoints` endpoints; and the worker's CPU
    per delivery."""
    [(project, _)] = projects_with_endpoints(actor, receiver, endpoints)
    cpu_before = worker.cpu_seconds() if worker else 0.0
    seqs, committed = tagged_burst(project, actor, events)
    arrivals = receiver.collect({(f"/hooks/{n}", seq) for seq in seqs for n in range(endpoints)}, timeout=300)
    deliveries = events * endpoints
    cpu_ms = (worker.cpu_seconds() - cpu_before) * 1000 / deliveries if worker else None
    return {"per_second": deliveries / (max(arrivals.values()) - committed), "deliveries": deliveries,
            "cpu_ms": cpu_ms}


def lone_latencies(actor, receiver: ReceiverProcess, *, rounds: int, endpoints: int) -> list[float]:
    """Commit → first byte (ms) of every delivery of `rounds` rounds of events: in each, one ticket created in
    each project (to its endpoints), the next round once every endpoint had its message."""
    projects = projects_with_endpoints(actor, receiver, endpoints)
    latencies = []
    for n in range(rounds):
        commits = {}
        for project, numbers in projects:
            seq, committed = stamped_creation(project, actor, f"Lone {n}")
            commits.update({(f"/hooks/{e}", seq): committed for e in numbers})
        arrivals = receiver.collect(set(commits), timeout=60)
        latencies += [(arrivals[key] - committed) * 1000 for key, committed in commits.items()]
    return latencies


def run(*, small: bool, database_url: str, redis_url: str) -> dict:
    from accounts.models import User
    from webhooks import sender

    burst, wide_burst, lone = (50, 20, 5) if small else (3000, 300, 30)
    env = {"DATABASE_URL": database_url, "REDIS_URL": redis_url, "WEBHOOK_ALLOWED_PRIVATE_HOSTS": "127.0.0.1",
           "DATABASE_POOL_MAX_SIZE": "8"}
    actor = User.objects.filter(username="bench-webhooks").first() or User.objects.create(
        username="bench-webhooks", name="Bench")
    with ReceiverProcess() as receiver:
        worker = None if small else Worker(env).__enter__()
        try:
            one = burst_rate(actor, receiver, events=burst, endpoints=1, worker=worker)
            ten = burst_rate(actor, receiver, events=wide_burst, endpoints=10, worker=worker)
            alone = lone_latencies(actor, receiver, rounds=lone, endpoints=1)
            hundred = lone_latencies(actor, receiver, rounds=lone, endpoints=100)
        finally:
            if worker is not None:
                worker.__exit__(None, None, None)
            sender.stop()
    return {"one": one, "ten": ten, "lone": lone,
            "alone_p50": percentile(alone, 0.5), "alone_p99": percentile(alone, 0.99),
            "p50": percentile(hundred, 0.5), "p99": percentile(hundred, 0.99)}
