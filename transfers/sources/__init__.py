"""One module per source format, each reading its file into the writer's rows (transfers.rows):
`read(path, writer, progress)`, and `LABEL`, how comments of unmatched people name it.

Parsed with the libraries made for each format, never by hand: ijson (a stream of JSON, so memory stays
bounded whatever the file's size: one item at a time, in several passes over the file when a format's parts
refer to each other), the standard csv and zipfile modules.
"""

import io
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
from pathlib import Path
from typing import BinaryIO

import ijson

from ..errors import TransferFailed
from ..progress import Progress

# What ijson raises on a file that is not (well-formed) JSON, and what a truncated stream ends with.
JSON_ERRORS = (ijson.JSONError, ijson.IncompleteJSONError, UnicodeDecodeError)


class CountingFile(io.RawIOBase):
    """A file read through, telling the progress how far: `offset` (the bytes of the passes before) + its own."""

    def __init__(self, raw: BinaryIO, progress: Progress, offset: int):
        super().__init__()
        self.raw, self.progress, self.offset = raw, progress, offset

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        count = self.raw.readinto(buffer)
        self.progress.set(self.offset + self.raw.tell())
        return count


class Passes:
    """A file read `count` times over, its progress counted in bytes across all the passes."""

    def __init__(self, path: Path, progress: Progress, count: int):
        self.path, self.progress, self.count = path, progress, count
        self.size = path.stat().st_size
        self.done = 0
        progress.start(self.size * count)

    @contextmanager
    def next(self) -> Iterator[CountingFile]:
        with self.path.open("rb") as raw:
            yield CountingFile(raw, self.progress, self.done * self.size)
        self.done += 1


def json_items(stream, prefix: str, what: str) -> Iterator:
    """The items at `prefix` (ijson's path: "cards.item"), one at a time; a file that stops being JSON fails the
    job, saying where."""
    try:
        yield from ijson.items(stream, prefix, use_float=True)
    except JSON_ERRORS as error:
        raise TransferFailed(f"{what}: not valid JSON ({error})") from None


def parse_time(value, *, where: str, report) -> datetime | None:
    """An ISO 8601 time (UTC when it names no zone); None when absent, listed when unreadable."""
    if value in (None, ""):
        return None
    try:
        parsed = datetime.fromisoformat(str(value).strip())
    except ValueError:
        report.skip(where, f"not a date and time: {str(value)[:40]!r}: left out")
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def parse_day(value, *, where: str, report) -> date | None:
    """A date, or the date of a time."""
    if value in (None, ""):
        return None
    text = str(value).strip()
    try:
        return date.fromisoformat(text[:10])
    except ValueError:
        report.skip(where, f"not a date: {text[:40]!r}: left out")
        return None


def text_of(value, *, where: str = "") -> str:
    """A value the format keeps as text, refusing another type (a list where a title belongs)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise TransferFailed(f"{where}: text expected, not {type(value).__name__}")


def mapping(value, where: str) -> dict:
    if not isinstance(value, dict):
        raise TransferFailed(f"{where}: an object expected, not {type(value).__name__}")
    return value


def sources() -> dict:
    """Each source's module, by its name (imported here, not at the top: the modules import the writer)."""
    from . import github, jira, tracker, trello

    return {"tracker": tracker, "trello": trello, "jira": jira, "github": github}
