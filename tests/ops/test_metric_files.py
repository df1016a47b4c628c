"""core.metric_files: a scrape of the multiprocess sample files says, sample for sample, what prometheus_client's
own MultiProcessCollector says of them, on the first scrape and on later ones that reuse what it learnt."""

import os
import subprocess
import sys

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.parser import text_string_to_metric_families

from core.metric_files import SampleFiles

WRITER = """
import sys
from prometheus_client import Counter, Gauge, Histogram, Summary

requests = Counter("demo_requests", "Requests, with a \\\\ and a\\nnewline in the help", ["route", "status"])
duration = Histogram("demo_duration_seconds", "Time", ["route"], buckets=(0.1, 1, 2.5))
sockets = Gauge("demo_sockets", "Open sockets", ["kind"], multiprocess_mode="livesum")
each = Gauge("demo_each", "One per process")
sizes = Summary("demo_sizes", "Sizes")
plain = Counter("demo_plain", "No labels")
for line in sys.stdin:  # each line a number of routes to count requests of
    turns = int(line)
    for turn in range(turns):
        route = f"api/v1/route-{turn}/<id:item_id>"
        requests.labels(route, "200").inc(turn + 1)
        duration.labels(route).observe(turn * 0.7)
    requests.labels('odd "quoted" \\\\ back\\nslash é', "404").inc(2_000_000)
    duration.labels("slow").observe(turns)
    sockets.labels("board").inc(turns)
    each.set(turns)
    sizes.observe(1.5)
    plain.inc()
    print("written", flush=True)
"""


class Writer:
    """A process writing samples as a worker of the server writes them, in its own file of each kind."""

    def __init__(self, directory):
        self.process = subprocess.Popen([sys.executable, "-c", WRITER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True, env={**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(directory)})

    def write(self, turns: int) -> None:
        self.process.stdin.write(f"{turns}\n")
        self.process.stdin.flush()
        assert self.process.stdout.readline() == "written\n"

    def close(self) -> None:
        self.process.stdin.close()
        assert self.process.wait(timeout=30) == 0


def write_samples(directory, turns: int) -> None:
    writer = Writer(directory)
    writer.write(turns)
    writer.close()


def samples_of(text: bytes) -> dict:
    return {(family.name, family.type, family.documentation):
            sorted((sample.name, sorted(sample.labels.items()), sample.value) for sample in family.samples)
            for family in text_string_to_metric_families(text.decode())}


def library_view(directory) -> bytes:
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(directory))
    return generate_latest(registry)


def paths_in(directory) -> list[str]:
    return sorted(str(path) for path in directory.glob("*.db"))


def test_a_scrape_says_what_the_library_says(tmp_path):
    write_samples(tmp_path, 3)
    write_samples(tmp_path, 5)

    ours = SampleFiles().exposition(paths_in(tmp_path))

    assert samples_of(ours) == samples_of(library_view(tmp_path))
    assert b'demo_requests_total{route="odd \\"quoted\\" \\\\ back\\nslash \xc3\xa9",status="404"} 4e+06\n' in ours
    assert b'demo_duration_seconds_bucket{le="+Inf",route="slow"} 2.0\n' in ours


def test_later_scrapes_follow_new_values_new_series_and_new_files(tmp_path):
    files, writer = SampleFiles(), Writer(tmp_path)
    writer.write(2)
    files.exposition(paths_in(tmp_path))

    writer.write(5)  # the same files: values change in place, and new series are appended
    assert samples_of(files.exposition(paths_in(tmp_path))) == samples_of(library_view(tmp_path))

    write_samples(tmp_path, 3)  # another process's files
    assert samples_of(files.exposition(paths_in(tmp_path))) == samples_of(library_view(tmp_path))
    writer.close()


def test_the_gauges_of_an_ended_process_leave_the_scrape(tmp_path):
    files = SampleFiles()
    write_samples(tmp_path, 2)
    write_samples(tmp_path, 3)
    assert b'demo_sockets{kind="board"} 5.0\n' in files.exposition(paths_in(tmp_path))
    for live in tmp_path.glob("gauge_livesum_*.db"):
        live.unlink()

    scraped = files.exposition(paths_in(tmp_path))

    assert b"demo_sockets" not in scraped
    assert samples_of(scraped) == samples_of(library_view(tmp_path))


def test_a_file_removed_after_the_listing_is_skipped(tmp_path):
    write_samples(tmp_path, 2)
    paths = paths_in(tmp_path)
    (tmp_path / os.path.basename(paths[-1])).unlink()

    assert samples_of(SampleFiles().exposition(paths)) == samples_of(library_view(tmp_path))


def test_a_gauge_mode_that_does_not_add_up_is_refused_by_name(tmp_path):
    subprocess.run([sys.executable, "-c", "from prometheus_client import Gauge; "
                    "Gauge('demo_peak', 'Peak', multiprocess_mode='max').set(3)"], check=True,
                   env={**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)})

    with pytest.raises(ValueError, match="'max' multiprocess mode"):
        SampleFiles().exposition(paths_in(tmp_path))
