"""Many sockets on one machine: SOCKETS websockets open on the Procfile's server (2 workers, Redis) while the
VIEWERS viewers of one board are timed as bench/ws_fanout.py times them.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/tracker_bench_fleet_sockets REDIS_URL=redis://127.0.0.1:6379/5 \
        .venv/bin/python bench/ws_fleet.py

USERS people, each with a token of their own: the first VIEWERS watch the hot board (the first of PROJECTS
projects), everyone keeps one notification socket open, and the other board sockets are spread over the
other projects until SOCKETS are open; each person is a member of the projects they watch. The client is this one
asyncio process (no ping of its own: the server pings every socket). Reports the server's resident
memory per socket (its workers summed, after against before), the descriptors each worker holds, and
for MOVES moves on the hot board: frames lost and the delivery latency (p50, p99) to its viewers, the
server's CPU per move; and REQUESTS ordinary requests among the open sockets (none may be refused: the workers
count sockets and requests apart). The server runs with the Procfile's settings as shipped. The database is dropped and created anew (its name must contain `bench`).
"""

import asyncio
import itertools
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.ws_fanout import (  # noqa: E402
    Fanout,
    Mover,
    database_url,
    percentile,
    sockets_open,
    warm_up,
    workers_cpu_seconds,
    workers_rss_kib,
)
from tests.realtime.servers import ApiClient, Beside  # noqa: E402
from tests.security.procfile import ProcfileServer  # noqa: E402

SOCKETS = int(os.environ.get("SOCKETS", 10_000))
USERS = int(os.environ.get("USERS", 1_000))
PROJECTS = int(os.environ.get("PROJECTS", 200))
VIEWERS = int(os.environ.get("VIEWERS", 500))
MOVES = int(os.environ.get("MOVES", 20))
REQUESTS = int(os.environ.get("REQUESTS", 50))
CONNECT_CONCURRENCY = 100
IDLE_SECONDS = 10
TOTAL_TIMEOUT = 900.0

# Run by `manage.py shell` against the server's database: the people, their projects and tokens.
SEED = """
import json, sys
from accounts.models import User
from accounts.services import issue_token
from projects.models import Membership
from projects.roles import Role
from projects.services import create_project
users, projects, watched = {users}, {projects}, {watched}
owner = User.objects.create(username="owner")
made = [create_project(owner=owner, name=f"Board {{n}}", prefix=f"B{{n}}") for n in range(projects)]
people = User.objects.bulk_create(User(username=f"viewer{{n}}") for n in range(users))
Membership.objects.bulk_create(Membership(project=made[project], user=people[person], role=Role.VIEWER)
                               for project, person in watched)
tokens = [issue_token(user=person)[1] for person in people]
print(json.dumps({{"projects": [project.pk for project in made], "tokens": tokens,
                  "owner": issue_token(user=owner)[1]}}))
"""


class Counted:
    """Frames received by the sockets that are only held open."""

    def __init__(self):
        self.frames = 0
        self.dropped = 0


async def hold(url: str, token: str, ready: asyncio.Semaphore, opened: list, on_frame) -> None:
    async with ready:
        socket = await connect(url, additional_headers={"Authorization": f"Bearer {token}"}, open_timeout=60,
                               ping_interval=None, max_queue=None)
    opened.append(socket)
    try:
        async for _ in socket:
            on_frame()
    except ConnectionClosed:
        on_frame(dropped=True)


def plan() -> list[tuple[int | None, int]]:
    """(project index, or None for a notification socket; person) for every socket: the hot board's viewers,
    one notification socket each, then board sockets on the other projects, person after person."""
    sockets = [(0, person) for person in range(VIEWERS)] + [(None, person) for person in range(USERS)]
    boards = zip(itertools.cycle(range(USERS)), itertools.cycle(range(1, PROJECTS)))
    while len(sockets) < SOCKETS:
        person, project = next(boards)
        sockets.append((project, person))
    return sockets


def path_of(project: int | None, seed: dict) -> str:
    return "/ws/v1/notifications/" if project is None else f"/ws/v1/projects/{seed['projects'][project]}/board/"


async def run(server: ProcfileServer, seed: dict) -> dict:
    hot = seed["projects"][0]
    tokens = seed["tokens"]
    idle_sockets = await warm_up(f"{server.ws_url}/ws/v1/projects/{hot}/board/", tokens[0], server.pid)
    rss_before = workers_rss_kib(server.pid)
    fanout, idle, opened, ready = Fanout(), Counted(), [], asyncio.Semaphore(CONNECT_CONCURRENCY)

    def on_hot_frame(dropped: bool = False) -> None:
        if dropped:
            fanout.dropped += 1
        else:
            fanout.arrived()

    def on_idle_frame(dropped: bool = False) -> None:
        if dropped:
            idle.dropped += 1
        else:
            idle.frames += 1

    planned = plan()

    async def open_all(indexes: range) -> list[asyncio.Task]:
        started = [asyncio.create_task(hold(f"{server.ws_url}{path_of(planned[index][0], seed)}",
                                            tokens[planned[index][1]], ready, opened,
                                            on_hot_frame if index < VIEWERS else on_idle_frame))
                   for index in indexes]
        while len(opened) < len(tasks) + len(started):
            failed = [task for task in started if task.done() and task.exception()]
            if failed:
                raise failed[0].exception()
            await asyncio.sleep(0.1)
        await asyncio.sleep(2)  # let the server settle
        return started

    # The hot board's viewers alone first: the same moves without the other sockets, in the same run.
    tasks: list[asyncio.Task] = []
    tasks += await open_all(range(VIEWERS))
    mover = Mover(server, seed["owner"], hot, fanout)
    await mover.warm_up()
    alone = await mover.timed(MOVES)

    started = time.perf_counter()
    tasks += await open_all(range(VIEWERS, len(planned)))
    opened_in = time.perf_counter() - started - 2
    rss_after = workers_rss_kib(server.pid)
    descriptors = [sockets_open(pid) - sockets for pid, sockets in idle_sockets.items()]
    # What the open sockets cost the server while nothing happens: pings, access rechecks, the collector.
    cpu_before = workers_cpu_seconds(server.pid)
    await asyncio.sleep(IDLE_SECONDS)
    idle_cpu = (workers_cpu_seconds(server.pid) - cpu_before) / IDLE_SECONDS
    # Ordinary requests among the open sockets: the workers count them apart, so none is refused.
    beside = Beside(server.url, seed["owner"], "127.0.0.1")
    requests = [await asyncio.to_thread(beside.one) for _ in range(REQUESTS)]
    timed = await mover.timed(MOVES)

    for socket in opened:
        await socket.close()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return {
        "sockets": len(opened), "users": USERS, "projects": PROJECTS, "viewers": VIEWERS,
        "opened_in_s": round(opened_in, 1), "descriptors_added_per_worker": descriptors,
        "workers_rss_mib_before": round(rss_before / 1024, 1), "workers_rss_mib_after": round(rss_after / 1024, 1),
        "server_kib_per_socket": round((rss_after - rss_before) / len(opened), 1),
        "moves": MOVES, "frames_lost": timed["lost"], "viewers_dropped": fanout.dropped,
        "idle_dropped": idle.dropped, "frames_to_idle_sockets": idle.frames,
        "latency_ms_p50": round(percentile(timed["latencies"], .5), 1),
        "latency_ms_p99": round(percentile(timed["latencies"], .99), 1),
        "workers_cpu_ms_per_move": round(timed["cpu_per_move"] * 1000, 1),
        "workers_idle_cpu_share": round(idle_cpu, 3),
        "client_cpu_ms_per_move": round(timed["client_cpu_per_move"] * 1000, 1),
        "alone_frames_lost": alone["lost"], "alone_latency_ms_p50": round(percentile(alone["latencies"], .5), 1),
        "alone_latency_ms_p99": round(percentile(alone["latencies"], .99), 1),
        "alone_workers_cpu_ms_per_move": round(alone["cpu_per_move"] * 1000, 1),
        "requests": len(requests), "requests_refused": sum(status != 200 for status, _ in requests),
        "requests_ms_p50": round(statistics.median(seconds for _, seconds in requests) * 1000, 1),
    }


def main() -> None:
    if not os.environ.get("REDIS_URL"):
        sys.exit("needs REDIS_URL: the server runs 2 worker processes")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = SOCKETS + 1024
    if soft < needed:  # the client's sockets, and the server's (it inherits the limit)
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(needed, hard), hard))
    with tempfile.TemporaryDirectory() as directory:
        env = {"DATABASE_URL": database_url(directory), "REDIS_URL": os.environ["REDIS_URL"], "WEB_CONCURRENCY": "2",
               "DJANGO_DEBUG": "0", "API_RATE_LIMIT_PER_MINUTE": str(10**9)}
        server = ProcfileServer(env)
        server.manage("migrate", "--no-input")
        watched = sorted({(project, person) for project, person in plan() if project is not None})
        seed = json.loads(server.manage("shell", "-c", SEED.format(users=USERS, projects=PROJECTS, watched=watched)))
        with server:
            owner = ApiClient(server.url, seed["owner"])
            code, _ = owner.request("POST", f"/api/v1/projects/{seed['projects'][0]}/tickets", {"title": "Moved"})
            assert code == 201, code
            owner.close()
            try:
                result = asyncio.run(asyncio.wait_for(run(server, seed), TOTAL_TIMEOUT))
            finally:
                errors = [line for line in server.output().splitlines() if "Error" in line or "Exception" in line]
                print("\n".join(errors[-20:]), file=sys.stderr)
    print(json.dumps({"open_files_limit": resource.getrlimit(resource.RLIMIT_NOFILE)[0], **result}, indent=2))


if __name__ == "__main__":
    main()
