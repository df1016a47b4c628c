"""The benchmark code runs end to end on tiny data (SQLite, in-memory layer), so it cannot rot.
Only that it runs and reports is checked here: timings belong to the benchmarks.

It uses SQLite whatever the suite runs on, so CI runs it once, in its PostgreSQL pass."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.__main__ import FIGURES

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.postgres
@pytest.mark.skipif(not os.environ.get("DATABASE_URL", "").startswith("postgres"),
                    reason="once per CI run: in its PostgreSQL pass")
# pgbouncer needs its pooler and sockets ten thousand connections: they run in full only.
@pytest.mark.parametrize("figure", [name for name in FIGURES if name not in {"pgbouncer", "sockets"}])
def test_figure_runs_on_tiny_data(figure, tmp_path):
    env = {**os.environ, "BENCH_SMALL": "1", "BENCH_CHILD": "1", "TMPDIR": str(tmp_path)}
    env.pop("DATABASE_URL", None)
    process = subprocess.run([sys.executable, "-m", "bench", figure], cwd=ROOT, env=env, capture_output=True,
                             text=True, timeout=120)
    assert process.returncode == 0, process.stderr[-3000:]
    result = json.loads(process.stdout.strip().splitlines()[-1])
    assert set(result) == {"figure", "value", "goal", "baseline", "details"}
    assert result["value"] and result["baseline"]


def test_unknown_figure_is_refused():
    process = subprocess.run([sys.executable, "-m", "bench", "nope"], cwd=ROOT, capture_output=True, text=True)
    assert process.returncode != 0 and "unknown figure nope" in process.stderr
