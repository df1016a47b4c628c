"""Availability under abuse (issue 36): each attack of the issue on the Procfile's server (2 workers, PostgreSQL,
Redis, the settings as shipped), at the issue's scale, with ordinary requests (a member's project list, each on a
connection of its own, from another loopback address) timed alone just before and then beside the attack, in
the same run. Each function is a figure of `python -m bench` (bench/__main__.py):

- abuse_sockets: one account opens 1,000 notification sockets;
- abuse_slow: one address keeps 4,000 slow connections open (a head never finished), reopening each one the
  server closes;
- abuse_bodies: 300 connections trickle their bodies, a byte every 20 s;
- abuse_logins: a login flood from 40 addresses, 16 at once, real password hashes;
- abuse_bucket: 30 downloads at once from a bucket that accepts connections and never answers.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/tracker_bench_availability REDIS_URL=redis://127.0.0.1:6379/5 \\
        .venv/bin/python -m bench abuse_logins

DATABASE_URL names the PostgreSQL database (its name must contain `bench`: it is dropped and created anew; by
default tracker_bench_availability, with BENCH_DATABASE_SUFFIX, on BENCH_DATABASE_URL's server); BENCH_SMALL=1 runs each on SQLite at a few
percent of the scale (the smoke test).
"""

import asyncio
import json
import os
import resource
import secrets
import socket
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.figures import REDIS_URL, SMALL  # noqa: E402
from bench.figures import database_url as bench_database  # noqa: E402
from bench.ws_fanout import database_url, workers_rss_kib  # noqa: E402
from tests.realtime.servers import Beside  # noqa: E402
from tests.security.procfile import ProcfileServer  # noqa: E402

ALONE = 10 if SMALL else 40  # ordinary requests timed before each attack


def an_address() -> str:
    return f"127.{secrets.randbelow(250) + 2}.{secrets.randbelow(256)}.{secrets.randbelow(250) + 2}"


@contextmanager
def attacked_server(**env: str):
    """The Procfile's server on a database of its own, with a member ('ordinary') and their token."""
    os.environ.setdefault("DATABASE_URL", "" if SMALL else bench_database("availability"))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # the attacks' sockets, and the server's
    with tempfile.TemporaryDirectory() as directory:
        settings = {"DATABASE_URL": database_url(directory), "REDIS_URL": "" if SMALL else REDIS_URL,
                    "WEB_CONCURRENCY": "1" if SMALL else "2", "STATIC_ROOT": f"{directory}/static",
                    "MEDIA_ROOT": f"{directory}/media",
                    # the ordinary client sends requests back to back, more than its token's 1,200 a minute
                    "API_RATE_LIMIT_PER_MINUTE": str(10**9), "API_USER_RATE_LIMIT_PER_MINUTE": str(10**9), **env}
        server = ProcfileServer(settings)
        server.manage("migrate", "--no-input")
        server.manage("collectstatic", "--no-input")
        server.manage("createuser", "ordinary")
        server.token = server.manage("issuetoken", "ordinary")
        with server:
            assert server.workers_serving(int(settings["WEB_CONCURRENCY"]))
            server.project = server.post("/api/v1/projects", {"name": "Ordinary", "prefix": "ORD"},
                                         server.token)["project"]
            yield server


def ordinary(server) -> tuple[Beside, float]:
    """The ordinary requests for an attack, and their p50 alone (ms), measured now."""
    beside = Beside(server.url, server.token, an_address(), limit=2000)
    alone = [beside.one() for _ in range(ALONE)]
    assert {status for status, _ in alone} == {200}, alone
    return beside, statistics.median(seconds for _, seconds in alone) * 1000


def beside_figures(beside: Beside, alone_ms: float) -> str:
    return (f"ordinary requests: {beside.refused()} of {len(beside.answers)} refused; p50 {beside.p50_ms():.0f} ms "
            f"beside ({beside.p50_ms() / alone_ms:.1f}× the {alone_ms:.0f} ms alone)")


# ---- 1. one account's websockets ----------------------------------------------------------------

def abuse_sockets() -> dict:
    from websockets.asyncio.client import connect
    from websockets.exceptions import InvalidStatus

    attempts = 30 if SMALL else 1000
    with attacked_server() as server:
        server.manage("createuser", "hoarder")
        token = server.manage("issuetoken", "hoarder")
        beside, alone_ms = ordinary(server)

        async def hoard() -> tuple[list, dict]:
            opened, refused = [], {}
            for _ in range(attempts):
                try:
                    opened.append(await connect(f"{server.ws_url}/ws/v1/notifications/", open_timeout=30,
                                                additional_headers={"Authorization": f"Bearer {token}"},
                                                ping_interval=None))
                except InvalidStatus as refusal:
                    key = (refusal.response.status_code, json.loads(refusal.response.body)["code"])
                    refused[key] = refused.get(key, 0) + 1
            return opened, refused

        async def attack() -> tuple[int, dict]:
            opened, refused = await hoard()
            await asyncio.gather(*(socket.close() for socket in opened))
            return len(opened), refused

        started = time.monotonic()
        with beside:
            opened, refused = asyncio.run(attack())
        seconds = time.monotonic() - started
    return {"figure": f"one account opens {attempts:,} websockets (issue 36, 1)",
            "value": f"{opened} open, the rest refused {refused}; {beside.refused()} ordinary requests refused",
            "goal": "at most WS_MAX_PER_USER (20) open, 429 beyond; no ordinary request refused",
            "baseline": f"ordinary requests alone: p50 {alone_ms:.0f} ms (before: 87 of 118 got 503)",
            "details": f"{beside_figures(beside, alone_ms)}; {seconds:.0f} s of handshakes, one after another, "
                       "counted across the 2 workers through Redis"}


# ---- 2. one address's slow connections --------------------------------------------------------

async def hold_slow_connections(server, address: str, count: int, seconds: float) -> dict:
    """`count` connections from `address`, each sending an unfinished head and reopened as soon as the server
    closes it, for `seconds`: how many the server closed."""
    closed = 0
    stop = time.monotonic() + seconds

    async def one_slot() -> None:
        nonlocal closed
        while time.monotonic() < stop:
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", server.port, local_addr=(address, 0))
            except OSError:
                await asyncio.sleep(0.1)
                continue
            writer.write(b"GET /api/v1/projects HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            try:
                await asyncio.wait_for(reader.read(65536), timeout=max(0.01, stop - time.monotonic()))
                closed += 1  # the server answered or closed: open another
            except (TimeoutError, OSError):
                pass
            finally:
                writer.close()

    await asyncio.gather(*(one_slot() for _ in range(count)))
    return {"closed": closed}


def abuse_slow() -> dict:
    count, seconds = (150, 4) if SMALL else (4000, 20)
    with attacked_server() as server:
        beside, alone_ms = ordinary(server)
        with beside:
            held = asyncio.run(hold_slow_connections(server, an_address(), count, seconds))
    return {"figure": f"one address keeps {count:,} slow connections open, reopening each (issue 36, 2)",
            "value": f"{beside.refused()} of {len(beside.answers)} ordinary requests refused",
            "goal": "none refused (before: 82% answered 503)",
            "baseline": f"ordinary requests alone: p50 {alone_ms:.0f} ms",
            "details": f"{beside_figures(beside, alone_ms)}; {seconds} s; the server closed {held['closed']:,} of the "
                       "attacker's connections (100 per worker admitted, held to the head's 10 s deadline; the rest "
                       "refused within a second); the attacker is one asyncio process"}


# ---- 3. trickled bodies -----------------------------------------------------------------------

async def trickle_bodies(server, addresses: list[str], count: int, every: float, seconds: float) -> list:
    """`count` POSTs declaring a 1 MB body, spread over `addresses`, each sending a byte every `every` seconds:
    for each, ("answered", seconds) when the server answered it (a refusal), ("closed", seconds) when it closed it
    without an answer, or ("open", seconds) when it was still open after `seconds`."""
    started = time.monotonic()

    async def one(address: str) -> tuple[str, float]:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port, local_addr=(address, 0))
        writer.write(b"POST /api/v1/projects HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 1000000\r\n\r\n{")
        outcome = "open"
        try:
            while time.monotonic() - started < seconds:
                try:
                    received = await asyncio.wait_for(reader.read(65536), timeout=every)
                except TimeoutError:
                    writer.write(b" ")
                    continue
                outcome = "answered" if received else "closed"
                break
        except OSError:
            outcome = "closed"
        writer.close()
        return outcome, time.monotonic() - started

    return await asyncio.gather(*(one(addresses[index % len(addresses)]) for index in range(count)))


def abuse_bodies() -> dict:
    count, addresses, every, seconds = (20, 2, 1, 10) if SMALL else (300, 6, 20, 60)
    with attacked_server(**({"WEB_BODY_RATE_GRACE": "2"} if SMALL else {})) as server:
        beside, alone_ms = ordinary(server)
        rss_before = workers_rss_kib(server.pid)
        with beside:
            outcomes = asyncio.run(trickle_bodies(server, [an_address() for _ in range(addresses)], count, every,
                                                  seconds))
        rss_after = workers_rss_kib(server.pid)
    closed = [after for outcome, after in outcomes if outcome == "closed"]
    others = {outcome: sum(1 for kind, _ in outcomes if kind == outcome) for outcome in ("answered", "open")}
    return {"figure": f"{count} connections trickle their bodies, a byte every {every} s (issue 36, 3)",
            "value": f"{len(closed)} closed after {min(closed):.1f}-{max(closed):.1f} s; workers "
                     f"{(rss_after - rss_before) / 1024:+.0f} MiB",
            "goal": "closed once the grace (10 s) has passed below 1 KiB/s; memory bounded (before: never closed, "
                    "+657 MB)",
            "baseline": f"ordinary requests alone: p50 {alone_ms:.0f} ms",
            "details": f"{beside_figures(beside, alone_ms)}; {count} connections from {addresses} addresses, each "
                       f"declaring 1 MB; besides those closed, {others['answered']} answered (429: over an "
                       f"address's 100 per worker) and {others['open']} still open after {seconds} s; the server "
                       "checks a body's pace every second; workers' resident memory after the attack against before"}


# ---- 4. a login flood -------------------------------------------------------------------------

def abuse_logins() -> dict:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()  # the helper below comes with the tests' modules
    from tests.fuzz.test_abuse import login_post

    addresses, threads, seconds = (5, 4, 3) if SMALL else (40, 16, 30)
    with attacked_server() as server:
        beside, alone_ms = ordinary(server)
        sources = [an_address() for _ in range(addresses)]
        statuses: dict[int, int] = {}
        stop = time.monotonic() + seconds

        def flood(thread: int) -> None:
            sent = 0
            while time.monotonic() < stop:
                source = sources[(thread + sent * threads) % addresses]
                status = login_post(server, f"victim{thread}-{sent}", "guess", source)[0]
                statuses[status] = statuses.get(status, 0) + 1
                sent += 1

        with beside, ThreadPoolExecutor(threads) as pool:
            list(pool.map(flood, range(threads)))
    return {"figure": f"a login flood from {addresses} addresses, {threads} at once (issue 36, 4)",
            "value": f"ordinary p50 {beside.p50_ms() / alone_ms:.1f}× alone; {beside.refused()} refused",
            "goal": "ordinary requests served, none refused, no 5xx (before: p50 170 → 3,243 ms, 500s and 503s)",
            "baseline": f"ordinary requests alone: p50 {alone_ms:.0f} ms",
            "details": f"{beside_figures(beside, alone_ms)}; logins answered {dict(sorted(statuses.items()))} "
                       f"(200: checked and failed; 429: an address's limit, or no turn to hash within 2 s) over "
                       f"{seconds} s; real PBKDF2 hashes (about 0.2 s each), one at a time per worker"}


# ---- 5. a bucket that hangs -------------------------------------------------------------------

def abuse_bucket() -> dict:
    downloads = 3 if SMALL else 30
    with socket.create_server(("127.0.0.1", 0), backlog=256) as hung:
        bucket = {"AWS_STORAGE_BUCKET_NAME": "tracker-hung", "AWS_S3_REGION_NAME": "us-east-1",
                  "AWS_S3_ENDPOINT_URL": f"http://127.0.0.1:{hung.getsockname()[1]}",
                  "AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench-secret",
                  **({"AWS_S3_CONNECT_TIMEOUT": "1", "AWS_S3_READ_TIMEOUT": "1"} if SMALL else {})}
        with attacked_server(**bucket) as server:
            project = server.project["id"]
            server.post(f"/api/v1/projects/{project}/tickets", {"title": "Files"}, server.token)
            ids = server.manage("shell", "-c", (
                "from tickets.models import Attachment, Ticket; from accounts.models import User; "
                "t = Ticket.objects.get(); u = User.objects.get(username='ordinary'); "
                f"print([Attachment.objects.create(ticket=t, file=f'attachments/gone-{{n}}.txt', original_name='a.txt', "
                f"filesize=1, mime_type='text/plain', uploaded_by=u).pk for n in range({downloads})])"))
            beside, alone_ms = ordinary(server)

            def download(attachment_id: int) -> int:
                import http.client

                connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
                connection.request("GET", f"/api/v1/attachments/{attachment_id}",
                                   headers={"Authorization": f"Bearer {server.token}"})
                status = connection.getresponse().status
                connection.close()
                return status

            started = time.monotonic()
            with beside, ThreadPoolExecutor(downloads) as pool:
                statuses = list(pool.map(download, json.loads(ids)))
            seconds = time.monotonic() - started
    return {"figure": f"{downloads} downloads at once from a bucket that never answers (issue 36, 5)",
            "value": f"downloads {sorted(set(statuses))} after {seconds:.0f} s; {beside.refused()} ordinary requests "
                     "refused",
            "goal": "downloads 503 with Retry-After; no ordinary request refused (before: every route 503)",
            "baseline": f"ordinary requests alone: p50 {alone_ms:.0f} ms",
            "details": f"{beside_figures(beside, alone_ms)}; the defaults: AWS_S3_CONNECT_TIMEOUT 3 s, "
                       "AWS_S3_READ_TIMEOUT 10 s, two attempts; a pool of 10 connections per worker, none held while "
                       "the bucket is waited on"}


if __name__ == "__main__":
    print(json.dumps(globals()[sys.argv[1]](), indent=2))
