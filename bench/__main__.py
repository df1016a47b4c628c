"""`python -m bench` runs every figure and writes bench/RESULTS.md; `python -m bench NAME` runs one,
`python -m bench --write NAME` reruns it into RESULTS.md beside the others of the last run.

Each figure runs in a process of its own (its own database) and prints one JSON line; the floor or
baseline it is divided by is measured in the same process, side by side. PostgreSQL databases are
named tracker_bench_* (then BENCH_DATABASE_SUFFIX, if set); BENCH_DATABASE_URL (a server URL, default
postgres://postgres@127.0.0.1:5432) and REDIS_URL (default redis://127.0.0.1:6379/5) say where. BENCH_SMALL=1 shrinks everything (the
smoke test, on SQLite).

The Redis database is the bench's own: it is emptied before each figure, as each figure has a database of its
own. The servers count requests and open sockets there by user and token id, and ids start again at 1 in each
figure's database: without it, a figure's users were charged what the figure before had sent.
"""

import importlib
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Each figure, and the module of bench/ whose function of that name measures it.
FIGURES = {
    "board": "figures", "growth": "figures", "detail": "figures", "creates": "figures", "search": "figures",
    "fanout": "figures", "pages": "figures", "etag": "figures", "moves": "figures", "moves_together": "figures",
    "idempotency": "idempotency_bench", "webhooks": "figures",
    "files": "fleet", "pgbouncer": "fleet", "scrape": "fleet", "sockets": "fleet", "board_page": "board_page",
    "transfers": "transfers_bench", "emails": "email_bench",
    "abuse_sockets": "availability", "abuse_slow": "availability", "abuse_bodies": "availability",
    "abuse_logins": "availability", "abuse_bucket": "availability",
}
STORE = ROOT / "bench" / "results.json"


def main(argv: list[str]) -> None:
    write = "--write" in argv or not argv
    argv = [name for name in argv if name != "--write"]
    names = argv or FIGURES
    unknown = set(names) - set(FIGURES)
    if unknown:
        sys.exit(f"unknown figure {', '.join(sorted(unknown))}; known: {', '.join(FIGURES)}")
    if len(names) == 1 and os.environ.get("BENCH_CHILD"):
        measure = getattr(importlib.import_module(f"bench.{FIGURES[names[0]]}"), names[0])
        _empty_the_benchs_redis()
        print(json.dumps(measure()), flush=True)
        return
    results = []
    for name in names:
        started = time.perf_counter()
        process = subprocess.run([sys.executable, "-m", "bench", name], cwd=ROOT, capture_output=True, text=True,
                                 env={**os.environ, "BENCH_CHILD": "1"}, timeout=600)
        if process.returncode != 0:
            sys.stderr.write(process.stdout + process.stderr)
            sys.exit(f"figure {name} failed")
        result = json.loads(process.stdout.strip().splitlines()[-1])
        result["seconds"] = round(time.perf_counter() - started)
        result["figure_name"] = name
        print(json.dumps(result), flush=True)
        results.append(result)
    if write:
        # `--write NAME...` reruns some figures and keeps the others of the last full run.
        kept = json.loads(STORE.read_text()) if argv and STORE.exists() else {}
        kept.update((result["figure_name"], result) for result in results)
        STORE.write_text(json.dumps(kept, indent=1))
        (ROOT / "bench" / "RESULTS.md").write_text(report([kept[name] for name in FIGURES if name in kept]))
        print("wrote bench/RESULTS.md")


def _empty_the_benchs_redis() -> None:
    from bench.figures import REDIS_URL, SMALL

    if not SMALL:  # small figures run on the in-memory layer and the process's own counters
        import redis

        with redis.Redis.from_url(REDIS_URL) as client:
            client.flushdb()


def _version(command: list[str]) -> str:
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=10).stdout.strip().splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError):
        return "unknown"


def report(results: list[dict]) -> str:
    from importlib.metadata import version

    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    memory = next(line.split(":", 1)[1].strip() for line in Path("/proc/meminfo").read_text().splitlines()
                  if line.startswith("MemTotal"))
    packages = ", ".join(f"{name} {version(name)}" for name in
                         ["Django", "djangorestframework", "orjson", "psycopg", "daphne", "gunicorn", "uvicorn",
                          "channels-redis"])
    lines = [
        "# Benchmark results", "",
        f"Written by `make bench` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. Every ratio divides "
        "two figures measured side by side in the same run, on a machine shared with other work: read the "
        "ratios, not the milliseconds.", "",
        f"- Machine: {cpu}, {os.cpu_count()} cores, {memory} RAM; {platform.platform()}",
        f"- Python {platform.python_version()}; {packages}",
        f"- {_version(['psql', '--version'])}; {_version(['redis-server', '--version'])}", "",
        "| figure | measured | goal | baseline (same run) | details |", "| --- | --- | --- | --- | --- |",
    ]
    lines += [f"| {r['figure']} | {r['value']} | {r['goal']} | {r['baseline']} | {r['details']} |" for r in results]
    lines += ["", (ROOT / "bench" / "CHANGES.md").read_text()]
    return "\n".join(lines)


if __name__ == "__main__":
    main(sys.argv[1:])
