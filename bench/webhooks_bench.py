"""Webhook deliveries: how many per second the Procfile's worker sends to a local receiver, and the time from
a write's commit to the receiver's first byte.

The receiver runs in a process of its own and stamps the first byte of each request with the wall clock; the
writer stamps the commit (its first on-commit callback, before the hand-out's). BENCH_SMALL=1: SQLite and the
web process's own threads instead of Celery on Redis.
"""

import http.client
import json
import multiprocessing
import os
import queue
import socket
import socketserver
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ANSWER = b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


def serve(port: int, arrivals) -> None:
    """The receiver's process: answers 204 to every POST and puts (seq, first byte's time) on `arrivals`."""

    class Handler(socketserver.BaseRequestHandler):
        def handle(self):
            data = self.request.recv(65536)
            first_byte = time.time()
            while b"\r\n\r\n" not in data:
                data += self.request.recv(65536)
            head, body = data.split(b"\r\n\r\n", 1)
            length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length:"))
            while len(body) < length:
                body += self.request.recv(65536)
            self.request.sendall(ANSWER)
            arrivals.put((json.loads(body).get("seq"), first_byte))

    socketserver.ThreadingTCPServer.allow_reuse_address = True
    with socketserver.ThreadingTCPServer(("127.0.0.1", port), Handler) as server:
        server.daemon_threads = True
        server.serve_forever(poll_interval=0.05)


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
        self.url = f"http://127.0.0.1:{self.port}/hooks"
        return self

    def __exit__(self, *exc_info) -> None:
        self.process.kill()
        self.process.join()

    def collect(self, seqs: set, timeout: float) -> dict:
        """{seq: first byte's time} for each of `seqs`, as they arrive."""
        seen, deadline = {}, time.monotonic() + timeout
        while not seqs <= seen.keys():
            try:
                seq, first_byte = self.arrivals.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                raise AssertionError(f"{len(seqs - seen.keys())} of {len(seqs)} deliveries missing") from None
            seen.setdefault(seq, first_byte)
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

    def __exit__(self, *exc_info) -> None:
        os.killpg(self.process.pid, 15)
        self.process.wait(timeout=30)
        self.log.close()


def stamped_creation(project, actor, title: str, commits: dict) -> None:
    """A ticket created (one event, numbered in its transaction), its commit's time kept by seq."""
    from django.db import transaction

    from projects.models import Project
    from tickets.services import create_ticket

    moment = {}
    with transaction.atomic():
        transaction.on_commit(lambda: moment.setdefault("at", time.time()))  # first: before the hand-out
        create_ticket(project=project, actor=actor, title=title)
    commits[Project.objects.values_list("board_seq", flat=True).get(pk=project.pk)] = moment["at"]


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


def plain_posts_per_second(url: str, count: int, threads: int = 8) -> float:
    """The receiver's own pace: the same kind of POST, sent by `threads` threads, unsigned and unchecked."""
    body = json.dumps({"event": "ticket.updated", "seq": None, "ticket": {"title": "x" * 400}}).encode()
    host, port = url.split("/")[2].split(":")

    def send(share: int) -> None:
        for _ in range(share):
            connection = http.client.HTTPConnection(host, int(port), timeout=10)
            connection.request("POST", "/hooks", body=body, headers={"Content-Type": "application/json"})
            connection.getresponse().read()
            connection.close()

    started = time.perf_counter()
    workers = [threading.Thread(target=send, args=(count // threads,)) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return count // threads * threads / (time.perf_counter() - started)


def percentile(values: list[float], share: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[round(share * 100) - 1]


def run(*, small: bool, database_url: str, redis_url: str) -> dict:
    """Lone events one after another (commit → first byte of each), then one burst (deliveries per second)."""
    from accounts.models import User
    from projects.services import create_project
    from webhooks import local
    from webhooks.services import create_webhook

    sequential, burst = (20, 50) if small else (300, 2000)
    env = {"DATABASE_URL": database_url, "REDIS_URL": redis_url, "WEBHOOK_ALLOWED_PRIVATE_HOSTS": "127.0.0.1",
           "DATABASE_POOL_MAX_SIZE": "8"}
    actor = User.objects.filter(username="bench-webhooks").first() or User.objects.create(
        username="bench-webhooks", name="Bench")
    project = create_project(owner=actor, name=f"Webhooks {time.time():.0f}", prefix="WH")
    latencies = []
    with ReceiverProcess() as receiver:
        create_webhook(project=project, actor=actor, url=receiver.url, events=["*"])
        worker = None if small else Worker(env).__enter__()
        try:
            commits = {}
            for n in range(sequential):
                stamped_creation(project, actor, f"Lone {n}", commits)
                seq = max(commits)
                latencies.append((receiver.collect({seq}, timeout=30)[seq] - commits[seq]) * 1000)
            seqs, committed = tagged_burst(project, actor, burst)
            arrivals = receiver.collect(seqs, timeout=120)
            per_second = burst / (max(arrivals.values()) - committed)
            baseline = plain_posts_per_second(receiver.url, burst)
        finally:
            if worker is not None:
                worker.__exit__(None, None, None)
            local.stop()
    return {"per_second": per_second, "baseline": baseline, "p50": percentile(latencies, 0.5),
            "p99": percentile(latencies, 0.99), "burst": burst, "sequential": sequential}
