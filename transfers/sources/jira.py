"""Jira's "Export Excel CSV (all fields)": one row an issue, read with the standard csv module. Multi-valued
fields (`Labels`, `Comment`, `Outward issue link (Blocks)`, …) repeat under the same header, so every column
of a name is read. Dates as Jira writes them (`12/Mar/24 3:04 PM`) or ISO 8601.
"""

import csv
import hashlib
import io
import re
from collections import defaultdict
from datetime import UTC, date, datetime
from pathlib import Path

from ..errors import TransferFailed
from ..progress import Progress
from ..rows import CommentRow, Person, StatusRow, TicketRow
from ..writer import Writer
from . import Passes

LABEL = "Jira"
# The largest cell read (a long description); csv's own default is 128 KiB.
FIELD_MAX = 1024 * 1024
KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_]*-([0-9]{1,9})$")
STATUSES = {
    "to do": ("todo", "todo"), "open": ("todo", "todo"), "in progress": ("in_progress", "active"),
    "in review": ("review", "review"), "done": ("done", "done"), "closed": ("done", "done"),
    "resolved": ("done", "done"), "backlog": ("backlog", "backlog"),
}
PRIORITIES = {"highest": "urgent", "blocker": "urgent", "critical": "urgent", "high": "high", "medium": "medium",
              "low": "low", "lowest": "low", "minor": "low", "trivial": "low"}
JIRA_TIME_FORMATS = ["%d/%b/%y %I:%M %p", "%d/%b/%Y %I:%M %p", "%d/%b/%y %H:%M", "%d/%b/%y"]
POSITION_STEP = 1024


class Row:
    """One issue's cells by header name; `all(name)` for a field Jira repeats."""

    def __init__(self, cells: list[str], columns: dict[str, list[int]]):
        self.cells, self.columns = cells, columns

    def all(self, name: str) -> list[str]:
        return [self.cells[i].strip() for i in self.columns.get(name, ()) if i < len(self.cells) and self.cells[i].strip()]

    def one(self, name: str) -> str:
        values = self.all(name)
        return values[0] if values else ""


def read(path: Path, writer: Writer, progress: Progress) -> None:
    csv.field_size_limit(FIELD_MAX)
    passes = Passes(path, progress, 1)
    with passes.next() as stream:
        text = io.TextIOWrapper(io.BufferedReader(stream), encoding="utf-8-sig", newline="")
        reader = csv.reader(text, strict=True)
        try:
            header = next(reader, None)
            if header is None or "Summary" not in header:
                raise TransferFailed("row 1: no header row with a Summary column")
            columns = defaultdict(list)
            for index, name in enumerate(header):
                columns[name.strip()].append(index)
            for row_number, cells in enumerate(reader, start=2):
                if any(cell.strip() for cell in cells):
                    _issue(Row(cells, columns), f"row {row_number}", writer)
        except csv.Error as error:
            raise TransferFailed(f"row {reader.line_num}: {error}") from None
        except UnicodeDecodeError as error:  # decoded ahead of the rows, a chunk at a time: no row to name
            raise TransferFailed(f"file: not UTF-8 text ({error.reason})") from None


def _issue(row: Row, where: str, writer: Writer) -> None:
    report = writer.report
    key = row.one("Issue key")
    match = KEY.match(key)
    if match is None:
        report.skip(where, f"no Issue key like KEY-123: {key[:40]!r}")
        return
    where = f"{where} ({key})"
    status_name = row.one("Status") or "To Do"
    slug, category = STATUSES.get(status_name.lower(), ("", "todo"))
    writer.status(StatusRow(key=status_name.lower(), label=status_name, slug=slug, category=category))
    writer.ticket(TicketRow(
        key=key, where=where, title=row.one("Summary"), status=status_name.lower(), number=int(match[1]),
        description=row.one("Description"), type="bug" if row.one("Issue Type").lower() == "bug" else "feature",
        priority=PRIORITIES.get(row.one("Priority").lower()),
        created_at=_time(row.one("Created"), f"{where}.Created", report),
        updated_at=_time(row.one("Updated"), f"{where}.Updated", report),
        done_at=_time(row.one("Resolved"), f"{where}.Resolved", report),
        deadline=_day(row.one("Due Date"), f"{where}.Due Date", report),
        story_points=_points(row.one("Custom field (Story Points)"), f"{where}.Story Points", report),
        position=int(match[1]) * POSITION_STEP,
        creator=_person(row.one("Reporter")), assignees=[_person(name) for name in row.all("Assignee")],
        tags=row.all("Labels")))
    for cell in row.all("Comment"):
        _comment(cell, key, where, writer)
    for blocked in row.all("Outward issue link (Blocks)"):
        writer.blocker(blocked=blocked, blocker=key, where=f"{where}.Outward issue link (Blocks)")
    for blocker in row.all("Inward issue link (Blocks)"):
        writer.blocker(blocked=key, blocker=blocker, where=f"{where}.Inward issue link (Blocks)")


def _comment(cell: str, key: str, where: str, writer: Writer) -> None:
    """`date;author;text` (the text may hold semicolons of its own)."""
    parts = cell.split(";", 2)
    if len(parts) != 3:
        writer.report.skip(f"{where}.Comment", "not date;author;text")
        return
    when, author, text = parts
    writer.comment(CommentRow(
        key=f"{key}/{hashlib.sha256(cell.encode()).hexdigest()[:32]}", ticket=key, where=f"{where}.Comment",
        text=text, author=_person(author), created_at=_time(when, f"{where}.Comment", writer.report)))


def _person(name: str) -> Person | None:
    name = name.strip()
    if not name:
        return None
    return Person(username=name, email=name if "@" in name else "", name=name)


def _time(value: str, where: str, report) -> datetime | None:
    if not value:
        return None
    for pattern in JIRA_TIME_FORMATS:
        try:
            return datetime.strptime(value, pattern).replace(tzinfo=UTC)
        except ValueError:
            continue
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        report.skip(where, f"not a date Jira writes: {value[:40]!r}: left out")
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _day(value: str, where: str, report) -> date | None:
    moment = _time(value, where, report)
    return moment.date() if moment else None


def _points(value: str, where: str, report) -> int | None:
    """Story points: a whole number (Jira writes 3 or 3.0); anything else is left out and listed. The writer
    drops (and lists) a number outside 0-3."""
    if not value:
        return None
    try:
        number = float(value)
    except ValueError:
        number = None
    if number is None or not number.is_integer():
        report.skip(where, f"story points {value[:20]!r} not a whole number: dropped")
        return None
    return int(number)
