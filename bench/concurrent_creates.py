"""Concurrent ticket creation through PROCESSES daphne processes sharing one PostgreSQL database.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/tracker_bench_pool .venv/bin/python bench/concurrent_creates.py
    PROCESSES=1 CLIENTS=8 SECONDS=20 DATABASE_URL=... .venv/bin/python bench/concurrent_creates.py

Creates the database if it is missing (its name must contain "bench") and migrates it, makes a user,
a token and a fresh project, starts the servers on 127.0.0.1, then runs CLIENTS threads, each on its
own keep-alive connection to one of the servers in turn, creating tickets back to back for SECONDS.
A sampler counts this database's PostgreSQL connections (pg_stat_activity) every 0.1 s during the
load and for AFTER seconds after it. Prints requests/s, answers by status, transport errors, the
most connections seen during the load and after it, and whether the ticket numbers came out
consecutive. DATABASE_POOL_* variables are passed on to the servers.
"""

import contextlib
import json
import os
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlparse

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from board_bench import ensure_database  # noqa: E402

from tests.realtime.servers import ApiClient, DaphneServer  # noqa: E402

PROCESSES = int(os.environ.get("PROCESSES", 2))
CLIENTS = int(os.environ.get("CLIENTS", 16))
SECONDS = float(os.environ.get("SECONDS", 20))
AFTER = float(os.environ.get("AFTER", 5))
SAMPLE_EVERY = 0.1


class ConnectionSampler(threading.Thread):
    """The number of connections to `database` (this sampler's own excluded), every SAMPLE_EVERY s."""

    def __init__(self, admin_url: str, database: str):
        super().__init__(daemon=True)
        self.admin_url, self.database = admin_url, database
        self.samples: list[tuple[float, int]] = []
        self.stopped = threading.Event()

    def run(self) -> None:
        with psycopg.connect(self.admin_url, autocommit=True) as connection:
            while not self.stopped.is_set():
                count = connection.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s",
                                           [self.database]).fetchone()[0]
                self.samples.append((time.monotonic(), count))
                time.sleep(SAMPLE_EVERY)

    def most(self, start: float, end: float) -> int:
        return max((count for at, count in self.samples if start <= at <= end), default=0)


def create_tickets(server_url: str, token: str, path: str, until: float, answers: Counter, refs: list) -> None:
    client = ApiClient(server_url, token)
    while time.monotonic() < until:
        try:
            status, body = client.request("POST", path, {"title": "Created under load"})
        except OSError as error:
            answers[f"transport error ({type(error).__name__})"] += 1
            continue
        answers[status] += 1
        if status == 201:
            refs.append(body["ticket_ref"])
        elif status >= 500 and answers[status] <= 3:
            print(f"{status}: {body}", file=sys.stderr)
    client.close()


def print_errors(servers: list[DaphneServer]) -> None:
    for server in servers:
        errors = [line for line in server.output().splitlines() if "Error" in line]
        print("\n".join(errors[-5:]), file=sys.stderr)


def main() -> None:
    url = urlparse(os.environ.get("DATABASE_URL", ""))
    if not url.scheme.startswith("postgres") or "bench" not in url.path:
        sys.exit("DATABASE_URL must name a PostgreSQL database whose name contains 'bench'")
    ensure_database()
    env = {"DATABASE_URL": url.geturl(), "REDIS_URL": os.environ.get("REDIS_URL", "")}
    with contextlib.ExitStack() as stack:
        servers = [stack.enter_context(DaphneServer(env)) for _ in range(PROCESSES)]
        stack.callback(print_errors, servers)
        first = servers[0]
        first.manage("migrate", "--no-input")
        first.manage("createuser", f"bench-creator-{os.getpid()}")
        token = first.manage("issuetoken", f"bench-creator-{os.getpid()}")
        project = first.post("/api/v1/projects", {"name": "Concurrent creates", "prefix": f"CC{os.getpid()}"},
                             token)["project"]
        path = f"/api/v1/projects/{project['id']}/tickets"

        sampler = ConnectionSampler(url._replace(path="/postgres").geturl(), url.path.lstrip("/"))
        sampler.start()
        answers, refs = Counter(), []
        started = time.monotonic()
        clients = [threading.Thread(target=create_tickets, args=(servers[i % PROCESSES].url, token, path,
                                                                 started + SECONDS, answers, refs))
                   for i in range(CLIENTS)]
        for client in clients:
            client.start()
        for client in clients:
            client.join()
        ended = time.monotonic()
        time.sleep(AFTER)
        sampler.stopped.set()
        sampler.join()

    numbers = sorted(int(ref.rsplit("-", 1)[1]) for ref in refs)
    print(json.dumps({
        "processes": PROCESSES, "clients": CLIENTS, "seconds": SECONDS,
        "pool": {key: value for key, value in os.environ.items() if key.startswith("DATABASE_POOL_")},
        "requests": sum(answers.values()), "requests_per_s": round(sum(answers.values()) / (ended - started), 1),
        "answers": {str(key): value for key, value in sorted(answers.items(), key=str)},
        "answers_5xx": sum(value for key, value in answers.items() if isinstance(key, int) and key >= 500),
        "numbers_consecutive": numbers == list(range(1, len(numbers) + 1)),
        "max_pg_connections_during_load": sampler.most(started, ended),
        "max_pg_connections_after_load": sampler.most(ended + 1, ended + AFTER),
        "pg_connections_at_end": sampler.samples[-1][1] if sampler.samples else None,
    }, indent=2))


if __name__ == "__main__":
    main()
