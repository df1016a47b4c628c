"""What an upload must look like to be taken at all: the start of a file of its source's format. A file that is
plainly something else is refused at once (422); everything past its first bytes is the job's to judge."""

import csv

from core.errors import RuleViolation

from .models import Source

HEAD_SIZE = 64 * 1024
BYTE_ORDER_MARK = b"\xef\xbb\xbf"
ZIP_START = b"PK\x03\x04"
EXPECTED = {
    Source.TRACKER: "a zip archive (our export)",
    Source.TRELLO: "a JSON object (Trello's board export)",
    Source.JIRA: "a CSV file whose header row has a Summary column (Jira's export)",
    Source.GITHUB: "a JSON array of issues",
}


def check_format(source: str, file) -> None:
    """Raise a 422 on `file` unless its first bytes are those of the source's format."""
    file.seek(0)
    head = file.read(HEAD_SIZE)
    file.seek(0)
    if not _looks_like(source, head):
        raise RuleViolation(f"file: not {EXPECTED[source]}", field="file")


def _looks_like(source: str, head: bytes) -> bool:
    if source == Source.TRACKER:
        return head.startswith(ZIP_START)
    text = head.removeprefix(BYTE_ORDER_MARK)
    if source in (Source.TRELLO, Source.GITHUB):
        start = text.lstrip()[:1]
        return start == (b"{" if source == Source.TRELLO else b"[")
    return _has_summary_header(text)


def _has_summary_header(head: bytes) -> bool:
    """The first line reads as a CSV row with a Summary cell (the rows after it are the job's to judge)."""
    try:
        first_line = head.split(b"\n", 1)[0].decode("utf-8")
        header = next(csv.reader([first_line]), [])
    except (UnicodeDecodeError, csv.Error):
        return False
    return "Summary" in [cell.strip() for cell in header]
