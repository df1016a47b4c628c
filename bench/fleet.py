"""The figures of running as a fleet (issue 26), for `make bench` (bench/figures.py names them):

- files: the worker memory a 152 MB upload request (16 files of 9.5 MB) and its 16 downloads at once add,
  through a bucket on moto's standalone S3 server (tests/ops/test_bucket_servers.py asserts the bound);
- pgbouncer: ticket detail throughput with the prepared statements of core.queries, without them, and
  without them through PgBouncer in transaction mode, the three servers taking turns;
- scrape: the time of GET /metrics from the Procfile's server when its metrics hold 1,000 route/status
  series written by two processes;
- sockets: bench/ws_fleet.py, 10,000 websockets on the Procfile's server with 500 viewers of one board timed.
"""

import contextlib
import json
import multiprocessing
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SMALL = bool(os.environ.get("BENCH_SMALL"))
MiB = 1024 * 1024


def files() -> dict:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()  # the helpers below come with the tests' modules
    from tests.ops.test_bucket_servers import GZIP_HEAD, WorkerMemory, download, upload
    from tests.s3 import MotoServer
    from tests.security.procfile import ProcfileServer

    count, size = (2, MiB) if SMALL else (16, int(9.5 * MiB))
    with tempfile.TemporaryDirectory() as folder, MotoServer() as s3:
        folder = Path(folder)
        env = {"DATABASE_URL": f"sqlite:///{folder / 'files.sqlite3'}", "REDIS_URL": "", "WEB_CONCURRENCY": "1",
               "MEDIA_ROOT": str(folder / "media"), **s3.new_bucket().env()}
        paths = []
        for index in range(count):
            path = folder / f"part-{index:02}.gz"
            path.write_bytes(GZIP_HEAD + os.urandom(size - len(GZIP_HEAD)))
            paths.append((path.name, path))
        with ProcfileServer(env) as server:
            server.manage("migrate", "--no-input")
            server.manage("createuser", "bench")
            server.token = server.manage("issuetoken", "bench")
            project = server.post("/api/v1/projects", {"name": "Files", "prefix": "FIL"}, server.token)["project"]
            server.post(f"/api/v1/projects/{project['id']}/tickets", {"title": "Files"}, server.token)
            server.ticket_id = 1
            download(server, upload(server, paths[:1])[0]["id"])  # loaded before measuring
            started = time.perf_counter()
            with WorkerMemory(server) as uploading:
                attachments = upload(server, paths)
            upload_seconds = time.perf_counter() - started
            started = time.perf_counter()
            with WorkerMemory(server) as downloading, ThreadPoolExecutor(count) as pool:
                statuses = {status for status, _, _ in pool.map(lambda a: download(server, a["id"]), attachments)}
            download_seconds = time.perf_counter() - started
    assert statuses == {200}, statuses
    megabytes = count * size / 1e6
    return {"figure": f"worker memory added by an upload of {count} files of {size / MiB:.1f} MiB to a bucket, "
                      "and by their downloads at once",
            "value": f"upload +{uploading.added_mib:.0f} MiB, downloads +{downloading.added_mib:.0f} MiB",
            "goal": "< 100 MiB each", "baseline": "upload +71 MiB with boto3's multipart uploads (before)",
            "details": f"{megabytes:.0f} MB; upload {upload_seconds:.1f} s, downloads {download_seconds:.1f} s; "
                       "peak resident memory (VmHWM, reset before) of the Procfile's one worker over what it held "
                       "before; moto's standalone S3 server on 127.0.0.1; downloads read in 64 KiB chunks"}


def pgbouncer() -> dict:
    from django.db import connection

    from bench.figures import _server_env, _token, board_project, setup
    from bench.load import Servers, hammer
    from tests.pgbouncer import PgBouncer

    setup("fleet")
    project = board_project(200 if SMALL else 2_000)
    headers = {"Authorization": f"Bearer {_token()}"}
    seconds, clients, turns = (1, 2, 2) if SMALL else (12, 16, 6)
    numbers = list(range(1, (200 if SMALL else 2_000) + 1))
    rng = random.Random(3)

    def request():
        return "GET", f"/api/v1/projects/{project.pk}/tickets/{rng.choice(numbers)}", headers, b""

    # Three servers on one token's counters in Redis: no limit is reached (each request is still counted).
    direct = {**_server_env(), "API_USER_RATE_LIMIT_PER_MINUTE": str(10**9)}
    database = connection.settings_dict
    with PgBouncer(database["HOST"], int(database["PORT"] or 5432), pool_size=20) as bouncer:
        through = {**direct, "DATABASE_URL": f"postgres://{database['USER']}@127.0.0.1:{bouncer.port}/{database['NAME']}"}
        kinds = {"prepared": direct, "plain": {**direct, "DATABASE_PREPARED_STATEMENTS": "0"},
                 "pgbouncer": {**through, "DATABASE_PREPARED_STATEMENTS": "0"}}
        rates = dict.fromkeys(kinds, 0.0)
        with contextlib.ExitStack() as stack:
            servers = {name: stack.enter_context(Servers("gunicorn", env)) for name, env in kinds.items()}
            for running in servers.values():  # warm up: each process's first requests compile and connect
                hammer(running, request, clients=clients, seconds=1)
            for _ in range(turns):
                for name, running in servers.items():
                    run = hammer(running, request, clients=clients, seconds=seconds / turns)
                    assert set(run["statuses"]) == {200}, (name, run["statuses"])
                    rates[name] += run["per_second"] / turns
    return {"figure": "ticket detail throughput without prepared statements (DATABASE_PREPARED_STATEMENTS=0) "
                      "÷ with them, 2 processes",
            "value": f"{rates['plain'] / rates['prepared']:.2f} direct, "
                     f"{rates['pgbouncer'] / rates['prepared']:.2f} through PgBouncer",
            "goal": "measured (the cost of running behind PgBouncer 1.18 in transaction mode)",
            "baseline": f"{rates['prepared']:.0f}/s with prepared statements, directly",
            "details": f"plain reads directly {rates['plain']:.0f}/s, through PgBouncer (transaction mode, pool 20) "
                       f"{rates['pgbouncer']:.0f}/s; {clients} keep-alive clients, {seconds} s of each in {turns} "
                       "turns taken in turn"}


def write_series(directory: str, routes: int, statuses: tuple[str, ...]) -> None:
    """One worker's samples: a request of every route and status, timed."""
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = directory
    from core import metrics

    for route in range(routes):
        for status in statuses:
            metrics.REQUESTS.labels("GET", f"api/v1/bench/route-{route}/<id:item_id>", status).inc()
        metrics.REQUEST_DURATION.labels("GET", f"api/v1/bench/route-{route}/<id:item_id>").observe(0.012)


def cpu_ms_per_call(function, calls: int) -> float:
    function()  # the first call reads what the files' keys mean
    started = time.process_time()
    for _ in range(calls):
        function()
    return (time.process_time() - started) * 1000 / calls


def collector_in_this_process(directory: Path, calls: int) -> float:
    """This process's CPU per exposition of the same files by prometheus_client's collector: the server's scrape
    without HTTP, its thread hop and other requests."""
    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.multiprocess import MultiProcessCollector

    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(directory))
    return cpu_ms_per_call(lambda: generate_latest(registry), calls)


def scrape() -> dict:
    import urllib.request

    from bench.ws_fanout import workers_cpu_seconds
    from tests.security.procfile import ProcfileServer

    routes, statuses, scrapes = (25, ("200", "404"), 10) if SMALL else (250, ("200", "401", "404", "422"), 50)
    with tempfile.TemporaryDirectory() as folder:
        directory = Path(folder) / "metrics"
        env = {"DATABASE_URL": f"sqlite:///{folder}/scrape.sqlite3", "REDIS_URL": "", "WEB_CONCURRENCY": "2",
               "METRICS_TOKEN": "bench", "PROMETHEUS_MULTIPROC_DIR": str(directory)}
        with ProcfileServer(env) as server:
            context = multiprocessing.get_context("spawn")  # a fresh interpreter reads the variable anew
            writers = [context.Process(target=write_series, args=(str(directory), routes, statuses)) for _ in range(2)]
            for writer in writers:
                writer.start()
            for writer in writers:
                writer.join()
            request = urllib.request.Request(f"{server.url}/metrics", headers={"Authorization": "Bearer bench"})
            timings, size, cpu_before = [], 0, 0.0
            for scrape_number in range(scrapes + 1):
                started = time.perf_counter()
                with urllib.request.urlopen(request, timeout=30) as response:
                    body = response.read()
                timings.append((time.perf_counter() - started) * 1000)
                size = len(body)
                if scrape_number == 0:  # the first loads the collector in that worker
                    cpu_before = workers_cpu_seconds(server.pid)
            cpu_ms = (workers_cpu_seconds(server.pid) - cpu_before) * 1000 / scrapes
            series = sum(1 for line in body.decode().splitlines() if line.startswith("tracker_http_requests_total{"))
            library_ms = collector_in_this_process(directory, scrapes)
    timings = timings[1:]
    return {"figure": f"GET /metrics with {series:,} route/status series, written by 2 processes",
            "value": f"{cpu_ms:.0f} ms of server CPU per scrape; p50 {statistics.median(timings):.0f} ms",
            "goal": "< 250 ms of CPU",
            "baseline": f"the same files merged in one process by prometheus_client's collector: {library_ms:.0f} ms "
                        "of CPU",
            "details": f"{scrapes} scrapes over HTTP from the Procfile's server (2 workers, multiprocess mode), "
                       f"max {max(timings):.0f} ms, {size / 1024:.0f} KiB of text: {routes} routes × {len(statuses)} "
                       "statuses in a counter, and a latency histogram per route (7 buckets), each written by two "
                       "processes that the scrape adds up; the CPU is the workers' own (/proc), unlike the wall "
                       "time barely moved by other work on the machine"}


def sockets() -> dict:
    from bench.figures import REDIS_URL, database_url

    small = {"SOCKETS": "300", "USERS": "60", "PROJECTS": "6", "VIEWERS": "20", "MOVES": "3"} if SMALL else {}
    env = {**os.environ, **small, "REDIS_URL": REDIS_URL,
           "DATABASE_URL": "" if SMALL else database_url("fleet_sockets")}
    process = subprocess.run([sys.executable, "bench/ws_fleet.py"], cwd=ROOT, env=env, capture_output=True, text=True,
                             timeout=1200, check=True)
    result = json.loads(process.stdout[process.stdout.index("{"):])
    return {"figure": f"{result['sockets']:,} websockets open (boards of {result['projects']} projects, a notification "
                      f"socket per person), {result['viewers']} viewers of one board timed",
            "value": f"{result['server_kib_per_socket']:.0f} KiB per socket; {result['frames_lost']} lost, "
                     f"p99 {result['latency_ms_p99']:.0f} ms; {result['requests_refused']} of {result['requests']} "
                     "requests refused",
            "goal": "< 64 KiB per socket; 0 lost, p99 < 300 ms; no request refused",
            "baseline": f"the {result['viewers']} viewers alone, same run: {result['alone_frames_lost']} lost, "
                        f"p99 {result['alone_latency_ms_p99']:.0f} ms",
            "details": f"p50 {result['latency_ms_p50']:.0f} ms (alone {result['alone_latency_ms_p50']:.0f} ms) over "
                       f"{result['moves']} moves; server CPU per move {result['workers_cpu_ms_per_move']:.0f} ms (alone "
                       f"{result['alone_workers_cpu_ms_per_move']:.0f} ms), idle {result['workers_idle_cpu_share']:.0%} "
                       f"of a core; the Procfile's server, 2 workers, Redis; workers {result['workers_rss_mib_before']:.0f}"
                       f" → {result['workers_rss_mib_after']:.0f} MiB; descriptors per worker "
                       f"{result['descriptors_added_per_worker']}; the viewers' client {result['client_cpu_ms_per_move']:.0f}"
                       f" ms of CPU per move; {result['sockets']:,} sockets opened in {result['opened_in_s']:.0f} s by one "
                       f"asyncio client process; ordinary requests among them p50 {result['requests_ms_p50']:.0f} ms; "
                       "the Procfile's settings as shipped (WEB_MAX_CONNECTIONS, WS_MAX_PER_USER)"}
