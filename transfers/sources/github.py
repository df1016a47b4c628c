"""GitHub issues: a JSON array, as `gh issue list --state all --json number,title,body,state,labels,assignees,
author,comments,createdAt,closedAt` writes it, or of the REST API's issue objects (`GET /repos/…/issues`).

Open issues come to do, closed ones done; the number is kept in a new project; labels are tags (`bug` also
makes the ticket a bug); gh's `comments` are comments (a REST issue only counts its comments: they are
fetched separately, and not part of the file). Pull requests (REST items with `pull_request`) are skipped.
"""

import hashlib
from pathlib import Path

from ..progress import Progress
from ..rows import CommentRow, Person, StatusRow, TagRow, TicketRow
from ..writer import Writer
from . import Passes, json_items, mapping, parse_time, text_of

LABEL = "GitHub"
STATES = {"open": StatusRow(key="open", label="To do", slug="todo", category="todo"),
          "closed": StatusRow(key="closed", label="Done", slug="done", category="done")}
POSITION_STEP = 1024


def read(path: Path, writer: Writer, progress: Progress) -> None:
    passes = Passes(path, progress, 1)
    for row in STATES.values():
        writer.status(row)
    with passes.next() as stream:
        for index, issue in enumerate(json_items(stream, "item", "issues")):
            _issue(mapping(issue, f"[{index}]"), f"[{index}]", writer)


def _issue(issue: dict, where: str, writer: Writer) -> None:
    report = writer.report
    if issue.get("pull_request"):
        report.skip(where, "a pull request")
        return
    number = issue.get("number")
    if not isinstance(number, int) or isinstance(number, bool):
        report.skip(where, "no issue number")
        return
    where = f"{where} (#{number})"
    state = text_of(issue.get("state"), where=f"{where}.state").lower()
    if state not in STATES:
        report.skip(where, f"state {state!r} is neither open nor closed")
        return
    labels = [mapping(label, f"{where}.labels") for label in issue.get("labels") or []]
    names = [text_of(label.get("name"), where=f"{where}.labels.name") for label in labels]
    for label, name in zip(labels, names, strict=True):
        color = text_of(label.get("color"), where=f"{where}.labels.color")
        writer.tag(TagRow(name=name, color=f"#{color.lower()}" if len(color) == 6 else ""))
    closed_at = parse_time(_either(issue, "closedAt", "closed_at"), where=f"{where}.closedAt", report=report)
    created_at = parse_time(_either(issue, "createdAt", "created_at"), where=f"{where}.createdAt", report=report)
    writer.ticket(TicketRow(
        key=str(number), where=where, title=text_of(issue.get("title"), where=f"{where}.title"), status=state,
        number=number, description=text_of(issue.get("body"), where=f"{where}.body"),
        type="bug" if any(name.lower() == "bug" for name in names) else "feature",
        position=number * POSITION_STEP, created_at=created_at, done_at=closed_at,
        updated_at=parse_time(_either(issue, "updatedAt", "updated_at"), where=f"{where}.updatedAt",
                              report=report) or closed_at or created_at,
        creator=_person(_either(issue, "author", "user")),
        assignees=[person for person in map(_person, issue.get("assignees") or []) if person], tags=names))
    comments = issue.get("comments")
    for index, comment in enumerate(comments if isinstance(comments, list) else []):
        _comment(mapping(comment, f"{where}.comments[{index}]"), f"{where}.comments[{index}]", str(number), writer)


def _comment(comment: dict, where: str, ticket: str, writer: Writer) -> None:
    body = text_of(comment.get("body"), where=f"{where}.body")
    created = _either(comment, "createdAt", "created_at")
    key = comment.get("id") or comment.get("url") or hashlib.sha256(f"{created}{body}".encode()).hexdigest()
    writer.comment(CommentRow(
        key=f"{ticket}/{key}", ticket=ticket, where=where, text=body, author=_person(_either(comment, "author", "user")),
        created_at=parse_time(created, where=f"{where}.createdAt", report=writer.report)))


def _either(item: dict, gh_name: str, rest_name: str):
    """The field as gh names it, else as the REST API does."""
    value = item.get(gh_name)
    return value if value is not None else item.get(rest_name)


def _person(user) -> Person | None:
    """A GitHub user by login; gh adds the name, the REST API sometimes the e-mail."""
    if not isinstance(user, dict) or not user.get("login"):
        return None
    return Person(username=str(user["login"]), email=str(user.get("email") or ""), name=str(user.get("name") or ""))
