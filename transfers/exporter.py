"""The export of a project: one zip, written as it is read into a temporary file (never whole in memory), then
stored through the storage API for its download.

- `attachments/…`: every stored file of the tickets and the docs, copied from the storage in chunks;
- `project.json` (`format` tracker-export, `version` 1): everything, written ticket by ticket;
- `tickets.csv`: one row a live ticket, for spreadsheets, no cell starting like a formula.

The files go first (a zip member is written whole before the next), so that project.json can give each its
sha256. On PostgreSQL the whole export reads one snapshot (REPEATABLE READ): what it says agrees with itself
even while the team works on.
"""

import csv
import hashlib
import re
import tempfile
import uuid
import zipfile
from contextlib import contextmanager
from datetime import UTC, datetime

import orjson
from django.core.files import File
from django.core.files.storage import default_storage
from django.db import connection, transaction
from django.db.models import Prefetch
from django.utils import timezone

from attachments.storage import chunks_of
from attachments.uploads import display_name
from core.spreadsheet import safe_cell
from core.time import timestamp
from docs_area.models import Article, ArticleAttachment, ArticleComment, ArticleVersion, Folder
from projects.models import Membership, Project, Status, Tag
from tickets.models import Attachment, Blocker, ChecklistItem, Comment, Ticket
from timetracking.models import TimeEntry

from .errors import Superseded
from .models import Job
from .progress import Progress
from .runner import record_success

FORMAT, VERSION = "tracker-export", 1
BATCH = 500
CSV_COLUMNS = ["number", "ref", "title", "status", "type", "priority", "assignees", "tags", "deadline", "story_points",
               "estimated_hours", "created_at", "updated_at", "archived"]
SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def run_export(job: Job, *, attempt: int, progress: Progress) -> None:
    with tempfile.TemporaryFile() as out:
        with consistent_reads():
            total = write_export(job.project, out, progress)
        out.seek(0)
        name = default_storage.save(f"exports/{uuid.uuid4().hex}.zip", File(out, name="export.zip"))
    try:
        with transaction.atomic():
            record_success(job, attempt=attempt, result=name, progress_done=total, progress_total=total)
    except Superseded:
        default_storage.delete(name)
        raise


@contextmanager
def consistent_reads():
    """One snapshot for every read on PostgreSQL; on SQLite a transaction would take the write lock (IMMEDIATE)
    for the whole export, so its reads go as they are."""
    if connection.vendor != "postgresql" or connection.in_atomic_block:  # a transaction of the caller's: its own
        yield
        return
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        yield


def write_export(project: Project, out, progress: Progress) -> int:
    """The project's zip, written into `out`; how many units the progress counted (files and tickets)."""
    ticket_files = Attachment.objects.filter(ticket__project=project).select_related("uploaded_by")
    doc_files = ArticleAttachment.objects.filter(article__project=project).select_related("uploaded_by")
    tickets = Ticket.objects.filter(project=project)
    progress.start(ticket_files.count() + doc_files.count() + tickets.count())
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, allowZip64=True) as archive, \
            tempfile.TemporaryFile("w+", encoding="utf-8", newline="") as table:
        files = {"tickets": _copy_files(archive, ticket_files, "tickets", progress),
                 "docs": _copy_files(archive, doc_files, "docs", progress)}
        with archive.open("project.json", "w", force_zip64=True) as member:
            _write_project_json(member, project, files, csv.writer(table), progress)
        table.seek(0)
        with archive.open("tickets.csv", "w", force_zip64=True) as member:
            while chunk := table.read(64 * 1024):
                member.write(chunk.encode())
    return progress.total


def _copy_files(archive: zipfile.ZipFile, records, area: str, progress: Progress) -> dict[int, dict]:
    """Each stored file into the zip, read through the storage in chunks; what project.json says of it, by id."""
    entries = {}
    last = 0
    while batch := list(records.filter(pk__gt=last).order_by("pk")[:BATCH]):
        for record in batch:
            path = f"attachments/{area}/{record.pk}/{SAFE_NAME.sub('_', display_name(record.original_name))}"
            digest, size = hashlib.sha256(), 0
            try:
                with archive.open(path, "w", force_zip64=True) as member:
                    for chunk in chunks_of(record.file.name, record.file.storage):
                        digest.update(chunk)
                        size += len(chunk)
                        member.write(chunk)
            except FileNotFoundError:  # the record outlived its file: listed without one
                path, size = None, record.filesize
            entries[record.pk] = {"id": record.pk, "name": record.original_name, "type": record.mime_type,
                                  "size": size, "sha256": digest.hexdigest() if path else None, "path": path,
                                  "uploaded_by": record.uploaded_by.username, "created_at": _time(record.created_at)}
            progress.advance()
        last = batch[-1].pk
    return entries


def _write_project_json(member, project: Project, files: dict, table, progress: Progress) -> None:
    def write(value) -> None:
        member.write(orjson.dumps(value))

    member.write(b'{"format":"tracker-export","version":1,"exported_at":')
    write(_time(timezone.now()))
    member.write(b',"project":')
    write(_project(project))
    for key, values in [("statuses", _statuses(project)), ("members", _members(project)), ("tags", _tags(project))]:
        member.write(f',"{key}":'.encode())
        write(values)
    member.write(b',"tickets":[')
    table.writerow(CSV_COLUMNS)
    first = True
    for ticket in _tickets(project):
        member.write(b"" if first else b",")
        write(_ticket(ticket, files["tickets"]))
        if ticket.deleted_at is None:
            table.writerow(_csv_row(project, ticket))
        first = False
        progress.advance()
    member.write(b'],"docs":')
    write(_docs(project, files["docs"]))
    member.write(b"}")


def _time(value: datetime | None) -> str | None:
    """Times to the microsecond, in UTC (ISO 8601): an import gives them back exactly."""
    return value.astimezone(UTC).isoformat() if value is not None else None


def _project(project: Project) -> dict:
    return {"id": project.pk, "name": project.name, "prefix": project.prefix, "description": project.description,
            "estimation_mode": project.estimation_mode, "docs_enabled": project.docs_enabled,
            "owner": project.owner.username, "created_at": _time(project.created_at)}


def _statuses(project: Project) -> list[dict]:
    return [{"slug": status.slug, "label": status.label, "color": status.color, "icon": status.icon,
             "category": status.category, "hidden": status.hidden, "sort_order": status.sort_order}
            for status in Status.objects.filter(project=project).order_by("sort_order", "id")]


def _members(project: Project) -> list[dict]:
    return [{"username": membership.user.username, "name": membership.user.name, "role": membership.role}
            for membership in Membership.objects.filter(project=project).select_related("user").order_by("user_id")]


def _tags(project: Project) -> list[dict]:
    return [{"name": tag.name, "color": tag.color, "sort_order": tag.sort_order}
            for tag in Tag.objects.filter(project=project).order_by("sort_order", "id")]


def _tickets(project: Project):
    """Every ticket of the project, deleted ones included, by number, a batch at a time with what it holds."""
    parts = [
        Prefetch("tags", Tag.objects.order_by("sort_order", "id")),
        Prefetch("assignees"),
        Prefetch("checklist_items", ChecklistItem.objects.order_by("sort_order", "id")),
        Prefetch("comments", Comment.objects.select_related("author").order_by("created_at", "id")),
        Prefetch("blocked_by_links", Blocker.objects.select_related("blocker").order_by("blocker__number")),
        Prefetch("attachments", Attachment.objects.order_by("pk")),
        Prefetch("time_entries", TimeEntry.objects.select_related("user").order_by("created_at", "id")),
    ]
    last = 0
    while batch := list(Ticket.objects.filter(project=project, number__gt=last).order_by("number")
                        .select_related("status", "created_by").prefetch_related(*parts)[:BATCH]):
        yield from batch
        last = batch[-1].number


def _ticket(ticket: Ticket, files: dict[int, dict]) -> dict:
    return {
        "id": ticket.pk, "number": ticket.number, "title": ticket.title, "description": ticket.description,
        "status": ticket.status.slug, "type": ticket.type, "priority": ticket.priority,
        "deadline": ticket.deadline.isoformat() if ticket.deadline else None, "story_points": ticket.story_points,
        "estimated_hours": str(ticket.estimated_hours) if ticket.estimated_hours is not None else None,
        "sort_order": ticket.sort_order, "created_at": _time(ticket.created_at),
        "updated_at": _time(ticket.updated_at), "archived_at": _time(ticket.archived_at),
        "deleted_at": _time(ticket.deleted_at), "done_at": _time(ticket.done_at),
        "creator": ticket.created_by.username,
        "assignees": sorted(user.username for user in ticket.assignees.all()),
        "tags": [tag.name for tag in ticket.tags.all()],
        "checklist": [{"id": item.pk, "text": item.text, "done": item.done, "sort_order": item.sort_order}
                      for item in ticket.checklist_items.all()],
        "comments": [{"id": comment.pk, "author": comment.author.username, "message": comment.message,
                      "created_at": _time(comment.created_at), "updated_at": _time(comment.updated_at),
                      "deleted_at": _time(comment.deleted_at)} for comment in ticket.comments.all()],
        "blockers": [link.blocker.number for link in ticket.blocked_by_links.all()],
        "attachments": [{**files[attachment.pk], "comment_id": attachment.comment_id}
                        for attachment in ticket.attachments.all() if attachment.pk in files],
        "time_entries": [{"id": entry.pk, "user": entry.user.username, "seconds": entry.seconds,
                          "minutes": entry.minutes, "is_running": entry.is_running,
                          "started_at": _time(entry.started_at), "stopped_at": _time(entry.stopped_at),
                          "note": entry.note, "created_at": _time(entry.created_at)}
                         for entry in ticket.time_entries.all()],
    }


def _csv_row(project: Project, ticket: Ticket) -> list:
    return [safe_cell(value) for value in [
        ticket.number, f"{project.prefix}-{ticket.number}", ticket.title, ticket.status.slug, ticket.type,
        ticket.priority or "", ", ".join(sorted(user.username for user in ticket.assignees.all())),
        ", ".join(tag.name for tag in ticket.tags.all()), ticket.deadline.isoformat() if ticket.deadline else "",
        "" if ticket.story_points is None else ticket.story_points,
        "" if ticket.estimated_hours is None else str(ticket.estimated_hours), timestamp(ticket.created_at),
        timestamp(ticket.updated_at), "yes" if ticket.archived_at else "no"]]


def _docs(project: Project, files: dict[int, dict]) -> dict:
    """The documentation area, deleted folders and articles included (small: read at once)."""
    folders = Folder.objects.filter(project=project).select_related("created_by").order_by("pk")
    articles = (Article.objects.filter(project=project).select_related("created_by", "updated_by").order_by("pk")
                .prefetch_related(Prefetch("versions", ArticleVersion.objects.select_related("edited_by")
                                           .order_by("created_at", "id")),
                                  Prefetch("comments", ArticleComment.objects.select_related("user")
                                           .order_by("created_at", "id")),
                                  Prefetch("attachments", ArticleAttachment.objects.order_by("pk"))))
    return {
        "folders": [{"id": folder.pk, "parent_id": folder.parent_id, "title": folder.title, "slug": folder.slug,
                     "sort_order": folder.sort_order, "created_by": folder.created_by.username,
                     "created_at": _time(folder.created_at), "updated_at": _time(folder.updated_at),
                     "deleted_at": _time(folder.deleted_at)} for folder in folders],
        "articles": [{
            "id": article.pk, "folder_id": article.folder_id, "title": article.title, "slug": article.slug,
            "content": article.content, "sort_order": article.sort_order,
            "created_by": article.created_by.username,
            "updated_by": article.updated_by.username if article.updated_by else None,
            "created_at": _time(article.created_at), "updated_at": _time(article.updated_at),
            "deleted_at": _time(article.deleted_at),
            "versions": [{"title": version.title, "content": version.content,
                          "edited_by": version.edited_by.username, "created_at": _time(version.created_at)}
                         for version in article.versions.all()],
            "comments": [{"id": comment.pk, "author": comment.user.username, "message": comment.message,
                          "created_at": _time(comment.created_at), "deleted_at": _time(comment.deleted_at)}
                         for comment in article.comments.all()],
            "attachments": [files[attachment.pk] for attachment in article.attachments.all()
                            if attachment.pk in files],
        } for article in articles],
    }


def download_name(project: Project, job: Job) -> str:
    """`<PREFIX>-export-<YYYY-MM-DD>.zip`, of the day the export was made."""
    return f"{project.prefix}-export-{(job.finished_at or timezone.now()).date().isoformat()}.zip"

