"""Board fan-out: VIEWERS websockets on one board, MOVES ticket moves through the REST API.

    .venv/bin/python bench/ws_fanout.py                                      # in-memory channel layer
    REDIS_URL=redis://127.0.0.1:6379/0 .venv/bin/python bench/ws_fanout.py   # Redis channel layer

Starts one daphne process on 127.0.0.1 (SQLite in a temporary file), connects the viewers with a
bearer token, then moves one ticket back and forth, one move at a time: each move waits until every
viewer has its frame (or MOVE_TIMEOUT passes). Reports the delivery latency from sending the API
request to a viewer receiving the frame (p50, p99 over every viewer of every move, and of the last
viewer of each move), and the server's resident memory per open websocket. The viewers run in this
one process, so the figures include its own time to read 500 sockets.
"""

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.realtime.servers import DaphneServer  # noqa: E402

VIEWERS = int(os.environ.get("VIEWERS", 500))
MOVES = int(os.environ.get("MOVES", 50))
MOVE_TIMEOUT = 10.0
CONNECT_CONCURRENCY = 50
TOTAL_TIMEOUT = 300.0


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


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


async def run(server: DaphneServer, token: str, project_id: int) -> dict:
    url = f"{server.ws_url}/ws/v1/projects/{project_id}/board/"
    fanout, ready, connected = Fanout(), asyncio.Semaphore(CONNECT_CONCURRENCY), []
    async with connect(url, additional_headers={"Authorization": f"Bearer {token}"}):
        pass  # warm up the websocket path before the memory baseline
    rss_before = rss_kib(server.pid)
    viewers = [asyncio.create_task(view(url, token, fanout, ready, connected)) for _ in range(VIEWERS)]
    while len(connected) < VIEWERS:
        await asyncio.sleep(0.05)
    await asyncio.sleep(1)  # let the server settle
    rss_after = rss_kib(server.pid)

    latencies, last_viewer, lost = [], [], 0
    for move in range(MOVES):
        fanout.start_move()
        status = "done" if move % 2 == 0 else "backlog"
        sent = time.perf_counter()
        await asyncio.to_thread(server.post, f"/api/v1/projects/{project_id}/tickets/1/move", {"status": status},
                                token)
        try:
            await asyncio.wait_for(fanout.all_arrived.wait(), MOVE_TIMEOUT)
        except TimeoutError:
            lost += VIEWERS - len(fanout.arrivals)
        delays = [(arrival - sent) * 1000 for arrival in fanout.arrivals]
        latencies += delays
        last_viewer.append(max(delays))

    for socket in connected:
        await socket.close()
    for viewer in viewers:
        viewer.cancel()
    await asyncio.gather(*viewers, return_exceptions=True)
    return {
        "layer": "redis" if os.environ.get("REDIS_URL") else "in-memory",
        "viewers": VIEWERS, "moves": MOVES, "frames_lost": lost, "viewers_dropped": fanout.dropped,
        "latency_ms_p50": round(percentile(latencies, .5), 1), "latency_ms_p99": round(percentile(latencies, .99), 1),
        "last_viewer_ms_p50": round(percentile(last_viewer, .5), 1),
        "last_viewer_ms_p99": round(percentile(last_viewer, .99), 1),
        "server_rss_mib_before": round(rss_before / 1024, 1), "server_rss_mib_after": round(rss_after / 1024, 1),
        "server_kib_per_connection": round((rss_after - rss_before) / VIEWERS, 1),
    }


def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        env = {"DATABASE_URL": f"sqlite:///{directory}/ws_fanout.sqlite3", "REDIS_URL": os.environ.get("REDIS_URL", "")}
        with DaphneServer(env) as server:
            server.manage("migrate", "--no-input")
            server.manage("createuser", "bench")
            token = server.manage("issuetoken", "bench")
            project = server.post("/api/v1/projects", {"name": "Fan-out", "prefix": "FAN"}, token)["project"]
            server.post(f"/api/v1/projects/{project['id']}/tickets", {"title": "Moved around"}, token)
            try:
                result = asyncio.run(asyncio.wait_for(run(server, token, project["id"]), TOTAL_TIMEOUT))
            finally:
                errors = [line for line in server.output().splitlines() if "Error" in line or "Exception" in line]
                print("\n".join(errors[-20:]), file=sys.stderr)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
