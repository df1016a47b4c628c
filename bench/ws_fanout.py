"""Board fan-out: VIEWERS websockets on one board, MOVES ticket moves through the REST API.

    .venv/bin/python bench/ws_fanout.py --processes 1                        # SQLite, in-memory layer
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/tracker_bench_fanout REDIS_URL=redis://127.0.0.1:6379/5 \
        .venv/bin/python bench/ws_fanout.py                                   # PostgreSQL, Redis, 2 processes
    REDIS_URL=... DATABASE_URL=... .venv/bin/python bench/ws_fanout.py --burst 200

The server is the production one, started as the Procfile's `web:` line says (gunicorn with
--processes uvicorn workers, default 2, sharing one port; Redis needed for more than one). The
database is DATABASE_URL when it names a PostgreSQL database (its name must contain `bench`: it is
dropped and created anew), else SQLite in a temporary file.

--burst N: instead of one move at a time, N moves are sent as fast as POSTERS concurrent clients can.
Each viewer then checks what it received against the event log's promise: every seq once, in order,
or a `resync_required` frame covering what it missed. Reports frames delivered, resyncs announced,
and silent holes (must be 0), duplicates and out-of-order frames (must be 0), and how long the burst
took to send and to reach the last viewer.

Without --burst, connects the viewers with a bearer token, moves the ticket untimed until every worker
has served a move (its first one costs it about 100 ms more), then moves one ticket back and forth, one
move at a time: each move waits until every viewer has its frame (or MOVE_TIMEOUT passes). Reports
the delivery latency from sending the API request to a viewer receiving the frame (p50, p99 over
every viewer of every move, and of the last viewer of each move), and the resident memory of the
server's worker processes (summed) per open websocket. The viewers run in this one process, so the
figures include its own time to read 500 sockets.
"""

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.realtime.servers import ApiClient  # noqa: E402
from tests.security.procfile import ProcfileServer  # noqa: E402

VIEWERS = int(os.environ.get("VIEWERS", 500))
MOVES = int(os.environ.get("MOVES", 50))
MOVE_TIMEOUT = 10.0
CONNECT_CONCURRENCY = 50
WARM_UP_MAX = 200
TOTAL_TIMEOUT = 300.0


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def workers(master: int) -> list[int]:
    """gunicorn's worker processes: the master's children."""
    return [int(child) for task in Path(f"/proc/{master}/task").iterdir()
            for child in (task / "children").read_text().split()]


def workers_rss_kib(master: int) -> int:
    return sum(rss_kib(worker) for worker in workers(master))


def sockets_open(pid: int) -> int:
    count = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(FileNotFoundError):  # closed since the listing
            count += os.readlink(fd).startswith("socket:")
    return count


def workers_cpu_seconds(master: int) -> float:
    """The CPU time (user and system) the workers have used so far: unlike latency, barely moved by other
    work on the machine."""
    ticks = sum(int(field) for worker in workers(master)
                for field in Path(f"/proc/{worker}/stat").read_text().rsplit(")", 1)[1].split()[11:13])
    return ticks / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], share: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(share * 100) - 1]


class Fanout:
    """Arrival times of the current move's frame at every viewer."""

    def __init__(self):
        self.arrivals: list[float] = []
        self.all_arrived = asyncio.Event()
        self.dropped = 0

    def start_move(self) -> None:
        self.arrivals = []
        self.all_arrived.clear()

    def arrived(self) -> None:
        self.arrivals.append(time.perf_counter())
        if len(self.arrivals) == VIEWERS:
            self.all_arrived.set()


def move_ticket(server: ProcfileServer, token: str, path: str, status: str) -> int | None:
    """One move on a connection of its own (the server closes keep-alive connections idle for 2 s); answers
    the worker that served it."""
    client = ApiClient(server.url, token)
    try:
        code, _ = client.request("POST", path, {"status": status})
        assert code == 200, code
        return serving_worker(server.pid, client.connection.sock.getsockname()[1])
    finally:
        client.close()


def serving_worker(master: int, client_port: int) -> int | None:
    """The worker holding the server's end of the local TCP connection from `client_port`."""
    ends = {f"socket:[{fields[9]}]" for fields in map(str.split, Path("/proc/net/tcp").read_text().splitlines()[1:])
            if fields[2].endswith(f":{client_port:04X}")}
    for worker in workers(master):
        for fd in Path(f"/proc/{worker}/fd").iterdir():
            with contextlib.suppress(FileNotFoundError):  # closed since the listing
                if os.readlink(fd) in ends:
                    return worker
    return None


class Mover:
    """Moves ticket 1 of a board back and forth, each move waiting until every viewer has its frame."""

    def __init__(self, server: ProcfileServer, token: str, project_id: int, fanout: Fanout):
        self.server, self.token, self.fanout = server, token, fanout
        self.path = f"/api/v1/projects/{project_id}/tickets/1/move"
        self.statuses = itertools.cycle(["done", "backlog"])

    async def move(self) -> tuple[list[float], int | None]:
        """One move: the delays (ms) until each viewer had its frame, and the worker that served it."""
        self.fanout.start_move()
        sent = time.perf_counter()
        worker = await asyncio.to_thread(move_ticket, self.server, self.token, self.path, next(self.statuses))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.fanout.all_arrived.wait(), MOVE_TIMEOUT)
        return [(arrival - sent) * 1000 for arrival in self.fanout.arrivals], worker

    async def warm_up(self) -> None:
        """Untimed moves until each worker has served one: a worker's first move compiles and connects what
        the later ones reuse (about 100 ms more), and the figure is the steady fan-out, not a worker's start."""
        served = set()
        for _ in range(WARM_UP_MAX):
            served.add((await self.move())[1])
            if served >= set(workers(self.server.pid)):
                return
        raise RuntimeError(f"{WARM_UP_MAX} moves did not reach every worker")

    async def timed(self, moves: int) -> dict:
        latencies, last_viewer, lost = [], [], 0
        cpu_before, client_cpu_before = workers_cpu_seconds(self.server.pid), time.process_time()
        for _ in range(moves):
            delays, _ = await self.move()
            lost += VIEWERS - len(delays)
            latencies += delays
            last_viewer.append(max(delays, default=MOVE_TIMEOUT * 1000))
        return {"latencies": latencies, "last_viewer": last_viewer, "lost": lost,
                "cpu_per_move": (workers_cpu_seconds(self.server.pid) - cpu_before) / moves,
                "client_cpu_per_move": (time.process_time() - client_cpu_before) / moves}


async def view(url: str, token: str, fanout: Fanout, ready: asyncio.Semaphore, connected: list) -> None:
    async with ready:
        socket = await connect(url, additional_headers={"Authorization": f"Bearer {token}"}, open_timeout=30,
                               max_queue=None)
    connected.append(socket)
    try:
        async for _ in socket:
            fanout.arrived()
    except ConnectionClosed:
        fanout.dropped += 1


async def warm_up(url: str, token: str, master: int) -> dict[int, int]:
    """Hold websockets open until every worker has one, so that each has run the websocket path before
    the memory baseline (the kernel may hand many connections in a row to one worker); answers each
    worker's sockets once they are closed again."""
    idle = {pid: sockets_open(pid) for pid in workers(master)}
    async with contextlib.AsyncExitStack() as held:
        for _ in range(WARM_UP_MAX):
            await held.enter_async_context(connect(url, additional_headers={"Authorization": f"Bearer {token}"}))
            await asyncio.sleep(0.01)
            if all(sockets_open(pid) > sockets for pid, sockets in idle.items()):
                break
        else:
            raise RuntimeError(f"{WARM_UP_MAX} websockets did not reach every worker")
    await asyncio.sleep(0.5)
    return {pid: sockets_open(pid) for pid in idle}


async def run(server: ProcfileServer, token: str, project_id: int) -> dict:
    url = f"{server.ws_url}/ws/v1/projects/{project_id}/board/"
    fanout, ready, connected = Fanout(), asyncio.Semaphore(CONNECT_CONCURRENCY), []
    idle_sockets = await warm_up(url, token, server.pid)
    rss_before = workers_rss_kib(server.pid)
    viewers = [asyncio.create_task(view(url, token, fanout, ready, connected)) for _ in range(VIEWERS)]
    while len(connected) < VIEWERS:
        await asyncio.sleep(0.05)
    await asyncio.sleep(1)  # let the server settle
    rss_after = workers_rss_kib(server.pid)
    sockets_added_per_worker = [sockets_open(pid) - sockets for pid, sockets in idle_sockets.items()]

    mover = Mover(server, token, project_id, fanout)
    await mover.warm_up()
    timed = await mover.timed(MOVES)
    latencies, last_viewer, lost = timed["latencies"], timed["last_viewer"], timed["lost"]
    cpu_per_move, client_cpu_per_move = timed["cpu_per_move"], timed["client_cpu_per_move"]

    for socket in connected:
        await socket.close()
    for viewer in viewers:
        viewer.cancel()
    await asyncio.gather(*viewers, return_exceptions=True)
    return {
        "layer": "redis" if os.environ.get("REDIS_URL") else "in-memory",
        # The viewers' sockets, plus any database or Redis connection a worker opened meanwhile.
        "viewers": VIEWERS, "sockets_added_per_worker": sockets_added_per_worker,
        "moves": MOVES, "frames_lost": lost, "viewers_dropped": fanout.dropped,
        "latency_ms_p50": round(percentile(latencies, .5), 1), "latency_ms_p99": round(percentile(latencies, .99), 1),
        "last_viewer_ms_p50": round(percentile(last_viewer, .5), 1),
        "last_viewer_ms_p99": round(percentile(last_viewer, .99), 1),
        "workers_rss_mib_before": round(rss_before / 1024, 1), "workers_rss_mib_after": round(rss_after / 1024, 1),
        "server_kib_per_connection": round((rss_after - rss_before) / VIEWERS, 1),
        "workers_cpu_ms_per_move": round(cpu_per_move * 1000, 1),
        "viewers_cpu_ms_per_move": round(client_cpu_per_move * 1000, 1),
    }


POSTERS = 4
BURST_DRAIN_TIMEOUT = 60.0


class Viewer:
    """One socket's frames, checked against the log's promise once the burst is over."""

    def __init__(self):
        self.seqs: list[int] = []
        self.resyncs: list[int] = []
        self.done_at: float | None = None

    def receive(self, frame: dict, final_seq: list[int]) -> None:
        if frame["event"] == "resync_required":
            self.resyncs.append(frame["seq"])
        else:
            self.seqs.append(frame["seq"])
        if final_seq and max(self.seqs + self.resyncs, default=0) >= final_seq[0]:
            self.done_at = self.done_at or time.perf_counter()

    def verdict(self, first: int, last: int) -> dict:
        covered = set(self.seqs)
        # A resync at seq S announces that everything up to S is to be reloaded.
        announced = set(range(first, max(self.resyncs) + 1)) if self.resyncs else set()
        holes = [seq for seq in range(first, last + 1) if seq not in covered and seq not in announced]
        return {"holes": len(holes), "duplicates": len(self.seqs) - len(covered),
                "out_of_order": sum(1 for a, b in itertools.pairwise(self.seqs) if b <= a)}


def latest_seq(server: ProcfileServer, token: str, project_id: int) -> int:
    """The project's last seq, read from its events feed."""
    client, after = ApiClient(server.url, token), 0
    try:
        while True:
            code, page = client.request("GET", f"/api/v1/projects/{project_id}/events?after={after}&limit=500")
            assert code == 200, code
            after = page["next_after"]
            if not page["has_more"]:
                return after
    finally:
        client.close()


async def run_burst(server: ProcfileServer, token: str, project_id: int, burst: int) -> dict:
    url = f"{server.ws_url}/ws/v1/projects/{project_id}/board/"
    viewers, sockets, final_seq = [Viewer() for _ in range(VIEWERS)], [], []
    ready = asyncio.Semaphore(CONNECT_CONCURRENCY)

    async def watch(index: int) -> None:
        async with ready:
            socket = await connect(url, additional_headers={"Authorization": f"Bearer {token}"},
                                   open_timeout=30, max_queue=None)
        sockets.append(socket)
        with contextlib.suppress(ConnectionClosed):
            async for message in socket:
                viewers[index].receive(json.loads(message), final_seq)

    tasks = [asyncio.create_task(watch(index)) for index in range(VIEWERS)]
    while len(sockets) < VIEWERS:
        await asyncio.sleep(0.05)
    await asyncio.sleep(1)
    first = latest_seq(server, token, project_id) + 1

    def post_moves(poster: int) -> None:
        # Each poster moves a ticket of its own back and forth: every move changes a column, so sends a frame.
        client = ApiClient(server.url, token)
        try:
            for move in range(poster, burst, POSTERS):
                status = "done" if (move // POSTERS) % 2 == 0 else "backlog"
                code, _ = client.request("POST", f"/api/v1/projects/{project_id}/tickets/{poster + 1}/move",
                                         {"status": status})
                assert code == 200, code
        finally:
            client.close()

    started = time.perf_counter()
    await asyncio.gather(*(asyncio.to_thread(post_moves, poster) for poster in range(POSTERS)))
    sent = time.perf_counter()
    final_seq.append(latest_seq(server, token, project_id))
    assert final_seq[0] == first + burst - 1, (first, final_seq)
    for viewer in viewers:
        if max(viewer.seqs + viewer.resyncs, default=0) >= final_seq[0]:
            viewer.done_at = viewer.done_at or sent
    deadline = sent + BURST_DRAIN_TIMEOUT
    while any(viewer.done_at is None for viewer in viewers) and time.perf_counter() < deadline:
        await asyncio.sleep(0.05)
    for socket in sockets:
        await socket.close()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)

    verdicts = [viewer.verdict(first, final_seq[0]) for viewer in viewers]
    unfinished = [viewer for viewer in viewers if viewer.done_at is None]
    return {
        "layer": "redis" if os.environ.get("REDIS_URL") else "in-memory",
        "viewers": VIEWERS, "burst_moves": burst, "frames_expected": VIEWERS * (final_seq[0] - first + 1),
        "frames_delivered": sum(len(viewer.seqs) for viewer in viewers),
        "viewers_resynced": sum(1 for viewer in viewers if viewer.resyncs),
        "silent_holes": sum(v["holes"] for v in verdicts), "duplicates": sum(v["duplicates"] for v in verdicts),
        "out_of_order": sum(v["out_of_order"] for v in verdicts), "viewers_unfinished": len(unfinished),
        "burst_send_s": round(sent - started, 2),
        "last_viewer_done_s": round(max((viewer.done_at for viewer in viewers if viewer.done_at), default=started)
                                    - started, 2),
    }


def database_url(directory: str) -> str:
    """DATABASE_URL, dropped and created anew, when it names a PostgreSQL database; else a SQLite file."""
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        return f"sqlite:///{directory}/ws_fanout.sqlite3"
    name = urlsplit(url).path.lstrip("/")
    if "bench" not in name:
        sys.exit(f"DATABASE_URL names {name!r}: the fan-out drops its database, so the name must contain 'bench'")
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')
    return url


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--processes", type=int, default=2, help="the server's worker processes")
    parser.add_argument("--burst", type=int, default=0, help="send this many moves at once (see above)")
    options = parser.parse_args()
    if options.processes > 1 and not os.environ.get("REDIS_URL"):
        sys.exit("--processes > 1 needs REDIS_URL: the in-memory layer does not cross processes")
    with tempfile.TemporaryDirectory() as directory:
        # One account holds every viewer here, so its cap of open sockets is raised to fit them: the cap is
        # checked at every handshake whatever its value (bench/ws_fleet.py keeps the shipped cap, a user each).
        env = {"DATABASE_URL": database_url(directory), "REDIS_URL": os.environ.get("REDIS_URL", ""),
               "WEB_CONCURRENCY": str(options.processes), "DJANGO_DEBUG": "0",
               "WS_MAX_PER_USER": str(VIEWERS + WARM_UP_MAX)}
        server = ProcfileServer(env)
        server.manage("migrate", "--no-input")
        server.manage("createuser", "bench")
        token = server.manage("issuetoken", "bench")
        with server:
            mover = ApiClient(server.url, token)
            project = mover.request("POST", "/api/v1/projects", {"name": "Fan-out", "prefix": "FAN"})[1]["project"]
            for _ in range(POSTERS if options.burst else 1):
                mover.request("POST", f"/api/v1/projects/{project['id']}/tickets", {"title": "Moved around"})
            mover.close()
            try:
                if options.burst:
                    result = asyncio.run(asyncio.wait_for(run_burst(server, token, project["id"], options.burst),
                                                          TOTAL_TIMEOUT))
                else:
                    result = asyncio.run(asyncio.wait_for(run(server, token, project["id"]), TOTAL_TIMEOUT))
            finally:
                errors = [line for line in server.output().splitlines() if "Error" in line or "Exception" in line]
                print("\n".join(errors[-20:]), file=sys.stderr)
    print(json.dumps({"processes": options.processes, **result}, indent=2))


if __name__ == "__main__":
    main()
