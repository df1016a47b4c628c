"""The text exposition of prometheus-client's multiprocess sample files, read fast enough for a scrape of
thousands of series to stay cheap (issue 26: under 50 ms with 1,000 route/status series).

prometheus_client's MultiProcessCollector and generate_latest parse every key's JSON, build a Sample per
entry and escape every label again at each scrape: 87 to 110 ms of CPU for 1,000 route/status series
written by two processes on the bench machine, against 5 to 8 ms here (bench/RESULTS.md, "scrape"). A file
only grows and its entries never move, so here a process reads what each key means once: the text of its
line up to the value, and the slot it adds into. A scrape then reads each file's values and sums them slot
by slot. The output is the same as prometheus_client's, sample for sample (tests/ops/test_metric_files.py).

Private internals, pinned in requirements.txt: `prometheus_client.mmap_dict._read_all_values`, which lists a
file's entries with the offset of each value, and that layout's values being native doubles at 8-byte
aligned offsets (the library pads every key to that alignment).
"""

import bisect
import json
import mmap
import os
import struct
import threading

from prometheus_client.mmap_dict import _read_all_values
from prometheus_client.utils import floatToGoString

SUMMED_GAUGES = frozenset({"sum", "livesum"})  # modes whose processes add up
PER_PROCESS_GAUGES = frozenset({"all", "liveall"})  # modes that keep each process apart, by a `pid` label
DOUBLE = struct.calcsize("d")
_used_length = struct.Struct("i").unpack_from


def escape(text: str) -> str:
    return text.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")


def labels_text(labels: dict) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{name}="{escape(value)}"' for name, value in sorted(labels.items())) + "}"


class Line:
    """A sample whose value is the sum of every process's."""

    def __init__(self, text: str, slot: int):
        self.text, self.slot = text, slot

    def render(self, totals: dict, out: list) -> None:
        value = totals.get(self.slot)
        if value is not None:
            out.append(f"{self.text} {floatToGoString(value)}\n")


class Buckets:
    """A histogram's buckets for one set of labels: each bucket counts what the smaller ones counted, and the
    largest's count is the histogram's `_count`."""

    def __init__(self, family: str, labels: dict):
        self.family, self.labels = family, labels
        self.count_text = f"{family}_count{labels_text(labels)}"
        self.bounds: list[tuple[float, str, int]] = []  # (upper bound, line text, slot), by bound

    def add(self, bound: str, slot: int) -> None:
        text = f"{self.family}_bucket{labels_text({**self.labels, 'le': floatToGoString(float(bound))})}"
        bisect.insort(self.bounds, (float(bound), text, slot))

    def render(self, totals: dict, out: list) -> None:
        cumulative, present = 0.0, False
        for _, text, slot in self.bounds:
            value = totals.get(slot)
            if value is not None:
                cumulative, present = cumulative + value, True
                out.append(f"{text} {floatToGoString(cumulative)}\n")
        if present:
            out.append(f"{self.count_text} {floatToGoString(cumulative)}\n")


class Family:
    """A metric's HELP and TYPE lines, then its samples in the order they were first read."""

    def __init__(self, name: str, kind: str, help_text: str):
        exposed = f"{name}_total" if kind == "counter" else name
        documentation = help_text.replace("\\", r"\\").replace("\n", r"\n")
        self.name = name
        self.header = f"# HELP {exposed} {documentation}\n# TYPE {exposed} {kind}\n"
        self.samples: list[Line | Buckets] = []
        self.buckets: dict[str, Buckets] = {}  # by the labels' text, without `le`

    def add(self, sample_name: str, labels: dict, bound: str | None, slot: int) -> None:
        if bound is None:
            self.samples.append(Line(f"{sample_name}{labels_text(labels)}", slot))
            return
        series = labels_text(labels)
        buckets = self.buckets.get(series)
        if buckets is None:
            buckets = self.buckets[series] = Buckets(self.name, labels)
            self.samples.append(buckets)
        buckets.add(bound, slot)

    def render(self, totals: dict) -> list[str]:
        out = []
        for sample in self.samples:
            sample.render(totals, out)
        return [self.header, *out] if out else []


class SampleFiles:
    """What one process knows of the sample files it has read, and the scrapes it answers from them."""

    def __init__(self):
        self.lock = threading.Lock()  # scrapes run in threads of their own (core.metrics.MetricsEndpoint)
        self.families: dict[str, Family] = {}
        # (how the file adds up, key) → the slot its values add into: the same key in every file of a kind that
        # adds up, and one per process for gauges kept apart
        self.meanings: dict[tuple[str, str], int] = {}
        self.layouts: dict[str, tuple[int, int, list[tuple[int, int]]]] = {}  # path → (inode, used, (slot, index)…)

    def exposition(self, paths: list[str]) -> bytes:
        with self.lock:
            totals: dict[int, float] = {}
            for path in paths:
                self.add_values(path, totals)
            self.layouts = {path: self.layouts[path] for path in paths if path in self.layouts}  # files removed
            return "".join(line for family in self.families.values() for line in family.render(totals)).encode()

    def add_values(self, path: str, totals: dict) -> None:
        try:
            with open(path, "rb") as file:
                data = file.read(mmap.PAGESIZE)
                used = _used_length(data, 0)[0]
                if used > len(data):
                    data += file.read(used - len(data))
                inode = os.fstat(file.fileno()).st_ino
        except FileNotFoundError:  # a gauge file of a process that has ended since the directory was listed
            return
        known = self.layouts.get(path)
        if known is None or known[:2] != (inode, used):
            known = self.layouts[path] = (inode, used, self.layout_of(path, data, used))
        values = memoryview(data)[:used].cast("d")
        for slot, index in known[2]:
            totals[slot] = totals.get(slot, 0.0) + values[index]

    def layout_of(self, path: str, data: bytes, used: int) -> list[tuple[int, int]]:
        kind, _, rest = os.path.basename(path).removesuffix(".db").partition("_")
        adds_up = kind
        if kind == "gauge":
            mode, _, pid = rest.partition("_")
            if mode not in SUMMED_GAUGES | PER_PROCESS_GAUGES:
                raise ValueError(f"{path}: gauges in the {mode!r} multiprocess mode are not read here")
            adds_up = f"gauge:{pid}" if mode in PER_PROCESS_GAUGES else "gauge"
        return [(self.slot_of(adds_up, kind, key), position // DOUBLE)
                for key, _value, _timestamp, position in _read_all_values(data, used)]

    def slot_of(self, adds_up: str, kind: str, key: str) -> int:
        slot = self.meanings.get((adds_up, key))
        if slot is None:
            slot = self.meanings[adds_up, key] = len(self.meanings)
            self.add_sample(adds_up, kind, key, slot)
        return slot

    def add_sample(self, adds_up: str, kind: str, key: str, slot: int) -> None:
        family_name, sample_name, labels, help_text = json.loads(key)
        family = self.families.get(family_name)
        if family is None:
            family = self.families[family_name] = Family(family_name, kind, help_text)
        if adds_up.startswith("gauge:"):
            labels = {**labels, "pid": adds_up.removeprefix("gauge:")}
        bound = labels.pop("le", None) if kind == "histogram" else None
        family.add(sample_name, labels, bound, slot)
