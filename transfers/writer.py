"""The one writer of every import: rows of any source (transfers.rows) written onto a project in bulk.

It runs inside the import's transaction (transfers.importer) and writes in batches of BATCH rows with
bulk_create / bulk_update, never through the per-row services: an import notifies nobody and sends no frame
but the one `project.imported` at its end. Every written ticket, comment, checklist item, file and time entry
is linked to its id in the source (SourceLink), so that a repeated import finds it again: a ticket found again
is updated, the rest are not written twice.

Numbers: in a new project a ticket keeps its source number when it is free; the others (and every new ticket
of an existing project) are written with a temporary number and renumbered after the highest at the end, in
one UPDATE, when the project's counter is advanced past them.
"""

import hashlib
import tempfile
from collections import defaultdict
from collections.abc import Iterable

from django.core.files import File
from django.db import connection
from django.db.models import F, Max
from django.utils import timezone
from django.utils.text import slugify

from accounts.models import User
from attachments.uploads import MAX_FILE_SIZE, accepted_upload
from core.errors import RuleViolation
from core.events import Action
from docs_area.models import Article, ArticleAttachment, ArticleComment, ArticleVersion, Folder
from projects.models import Project, Status, StatusCategory, Tag
from tickets.models import Activity, Attachment, Blocker, ChecklistItem, Comment, Ticket
from tickets.services.positions import GAP
from timetracking.models import TimeEntry, TimerState

from .errors import TransferFailed
from .models import SourceLink
from .people import People
from .progress import Progress
from .rows import (
    ArticleRow,
    ChecklistRow,
    CommentRow,
    FileRow,
    FolderRow,
    StatusRow,
    TagRow,
    TicketRow,
    TimeRow,
)

BATCH = 500
TEMPORARY_NUMBERS = 2_000_000_000  # above any real number, below PositiveIntegerField's top
SKIPPED_SHOWN = 100
COUNTED = ["tickets", "comments", "checklist_items", "tags", "statuses", "attachments", "time_entries", "folders",
           "articles"]
TICKET_FIELDS = ["title", "description", "status", "type", "priority", "deadline", "story_points",
                 "estimated_hours", "sort_order", "archived_at", "deleted_at", "done_at"]
LIMITS = {"title": 255, "description": 100_000, "comment": 20_000, "checklist": 500, "tag": 100, "status": 100,
          "note": 1000, "article": 200_000}
COPY_CHUNK = 64 * 1024
WRITE_ORDER = ["ticket", "comment", "checklist_item", "attachment", "time_entry"]


class Report:
    """What an import did, in the shape of the job's `report`."""

    def __init__(self):
        self.created = dict.fromkeys(COUNTED, 0)
        self.updated_tickets = 0
        self.skipped: list[dict] = []
        self.skipped_count = 0

    def skip(self, item: str, reason: str) -> None:
        self.skipped_count += 1
        if len(self.skipped) < SKIPPED_SHOWN:
            self.skipped.append({"item": item, "reason": reason})

    def as_dict(self, people: People) -> dict:
        return {"created": dict(self.created), "updated": {"tickets": self.updated_tickets},
                "skipped": self.skipped, "skipped_count": self.skipped_count, "users": people.summary()}


class Writer:
    def __init__(self, *, project: Project, actor: User, source: str, source_label: str, new_project: bool,
                 progress: Progress, stored: list[str]):
        self.project, self.actor, self.source, self.new_project = project, actor, source, new_project
        self.progress = progress
        self.stored = stored  # names written to the storage: the importer removes them if the import fails
        self.people = People(project_id=project.pk, source_label=source_label)
        self.report = Report()
        self.statuses = {status.slug: status for status in Status.objects.filter(project=project)}
        self.status_of: dict[str, Status] = {}  # by the source's key
        self.statuses_used: list[Status] = []  # in the order the source gave them
        self.tags = {tag.name.lower(): tag for tag in Tag.objects.filter(project=project)}
        self.ticket_ids: dict[str, int] = {}
        self.seen: set[tuple[str, str]] = set()  # (kind, key) written or found by this import
        self.numbers_taken: set[int] = set()  # kept from the source (a new project's only)
        self.temporaries = 0
        self.column_ends: dict[int, int] = {}
        self.pending: dict[str, list] = defaultdict(list)
        self.blockers: list[tuple[str, str, str]] = []  # (blocked key, blocker key, where)
        self.folder_ids: dict[str, int] = {}
        self.comment_ids: dict[str, int] = {}  # for the files that came with a comment
        # A new project's columns are exactly the source's (Trello's lists, our own export's statuses).
        self.exact_columns = False

    # ---- statuses and tags: few, written as they come ------------------------------------------------

    def status(self, row: StatusRow) -> Status:
        """The project's status for a column of the source: the one of its slug, else of its label (ignoring
        case), else a new one at the end of the board."""
        status = self.statuses.get(row.slug) if row.slug else None
        if status is None:
            status = next((s for s in self.statuses.values() if s.label.lower() == row.label.lower()), None)
        if status is None:
            status = Status.objects.create(
                project=self.project, slug=self._free_slug(row.slug or row.label), label=self._cut(
                    row.label, "status", row.key, "label") or row.slug, category=row.category,
                color=row.color or "#6c757d", icon=row.icon, hidden=row.hidden,
                sort_order=max((s.sort_order for s in self.statuses.values()), default=-1) + 1)
            self.statuses[status.slug] = status
            self.report.created["statuses"] += 1
        elif self.new_project and row.slug == status.slug:
            # A default column of the new project becomes the source's: its label (and look, when it has one).
            status.label, status.category = self._cut(row.label, "status", row.key, "label"), row.category
            if row.color:
                status.color, status.icon, status.hidden = row.color, row.icon, row.hidden
            status.save(update_fields=["label", "category", "color", "icon", "hidden"])
        self.status_of[row.key] = status
        if status not in self.statuses_used:
            self.statuses_used.append(status)
        return status

    def _free_slug(self, text: str) -> str:
        base = (slugify(text).replace("-", "_")[:40] or "status").strip("_") or "status"
        slug, number = base, 2
        while slug in self.statuses:
            slug, number = f"{base}_{number}", number + 1
        return slug

    def arrange_statuses(self) -> None:
        """A new project's columns become exactly the source's, in its order: the default columns it does not
        use go (they hold no ticket), and the others follow them."""
        used = set(status.pk for status in self.statuses_used)
        unused = [status for status in self.statuses.values() if status.pk not in used]
        Status.objects.filter(pk__in=[status.pk for status in unused]).delete()
        for index, status in enumerate(self.statuses_used):
            status.sort_order = index
        Status.objects.bulk_update(self.statuses_used, ["sort_order"])
        self.statuses = {status.slug: status for status in self.statuses_used}

    def tag(self, row: TagRow) -> Tag | None:
        name = row.name.strip()[:LIMITS["tag"]]
        if not name:
            return None
        tag = self.tags.get(name.lower())
        if tag is None:
            tag = Tag.objects.create(project=self.project, name=name, color=row.color or "#6c757d",
                                     sort_order=len(self.tags))
            self.tags[name.lower()] = tag
            self.report.created["tags"] += 1
        return tag

    # ---- rows, buffered and written in batches -------------------------------------------------------

    def ticket(self, row: TicketRow) -> None:
        if not self._first_time("ticket", row.key, row.where):
            return
        if row.status not in self.status_of:
            raise TransferFailed(f"{row.where}: no such status {row.status!r}")
        if not row.title.strip():
            self.report.skip(row.where, "no title")
            return
        self._buffer("ticket", row)

    def comment(self, row: CommentRow) -> None:
        if self._first_time("comment", row.key, row.where):
            self._buffer("comment", row)

    def checklist_item(self, row: ChecklistRow) -> None:
        if self._first_time("checklist_item", row.key, row.where):
            self._buffer("checklist_item", row)

    def file(self, row: FileRow) -> None:
        if self._first_time("attachment", row.key, row.where):
            self._buffer("attachment", row)

    def time_entry(self, row: TimeRow) -> None:
        if self._first_time("time_entry", row.key, row.where):
            self._buffer("time_entry", row)

    def blocker(self, *, blocked: str, blocker: str, where: str) -> None:
        self.blockers.append((blocked, blocker, where))

    def _first_time(self, kind: str, key: str, where: str) -> bool:
        if (kind, key) in self.seen:
            self.report.skip(where, f"the same {kind.replace('_', ' ')} id again: {key}")
            return False
        self.seen.add((kind, key))
        return True

    def _buffer(self, kind: str, row) -> None:
        self.pending[kind].append(row)
        if len(self.pending[kind]) >= BATCH:
            self.flush(kind)

    def flush(self, kind: str = "") -> None:
        """Write what is buffered of `kind` (else of every kind), and first what it may refer to: tickets,
        then comments (a file may come with one), then the rest."""
        order = WRITE_ORDER[:WRITE_ORDER.index(kind) + 1] if kind else WRITE_ORDER
        for each in order:
            if self.pending[each]:
                rows, self.pending[each] = self.pending[each], []
                getattr(self, f"_write_{each}s")(rows)
                self.progress.alive()

    def _linked(self, kind: str, keys: Iterable[str]) -> dict[str, int]:
        """The ids written for these source keys by earlier imports into this project."""
        return dict(SourceLink.objects.filter(project=self.project, source=self.source, kind=kind,
                                              source_id__in=list(keys)).values_list("source_id", "target_id"))

    def _link(self, kind: str, pairs: Iterable[tuple[str, int]]) -> None:
        # No ignore_conflicts: a second import of the same rows into the project at the same time fails here
        # (the unique constraint) rather than writing them twice.
        SourceLink.objects.bulk_create(
            [SourceLink(project=self.project, source=self.source, kind=kind, source_id=key[:255], target_id=pk)
             for key, pk in pairs])

    def _owned(self, kind: str, model, rows: list, filters: dict) -> tuple[dict, list]:
        """The rows' objects written by an earlier import (still there, by key) and the rows to create."""
        linked = self._linked(kind, [row.key for row in rows])
        alive = set(model.objects.filter(pk__in=linked.values(), **filters).values_list("pk", flat=True))
        found = {key: pk for key, pk in linked.items() if pk in alive}
        stale = [key for key in linked if key not in found]
        if stale:  # removed since (an admin's hard delete): written anew
            SourceLink.objects.filter(project=self.project, source=self.source, kind=kind, source_id__in=stale).delete()
        return found, [row for row in rows if row.key not in found]

    # ---- tickets ----------------------------------------------------------------------------------------

    def _write_tickets(self, rows: list[TicketRow]) -> None:
        found, new_rows = self._owned("ticket", Ticket, rows, {"project": self.project})
        tickets = [self._new_ticket(row) for row in new_rows]
        Ticket.objects.bulk_create(tickets)
        self._keep_times(Ticket, tickets, new_rows, ["created_at", "updated_at"])
        self._link("ticket", [(row.key, ticket.pk) for row, ticket in zip(new_rows, tickets, strict=True)])
        updated = self._update_tickets([row for row in rows if row.key in found], found)
        for row, ticket in [*zip(new_rows, tickets, strict=True), *updated]:
            self.ticket_ids[row.key] = ticket.pk
        self._write_people_and_tags([*zip(new_rows, tickets, strict=True), *updated],
                                    replace=[ticket.pk for _, ticket in updated])
        Activity.objects.bulk_create(
            Activity(ticket=ticket, actor=self.actor, action=Action.IMPORTED,
                     changes={"source": {"old": None, "new": self.source}, "source_id": {"old": None, "new": row.key}})
            for row, ticket in [*zip(new_rows, tickets, strict=True), *updated])
        self.report.created["tickets"] += len(tickets)
        self.report.updated_tickets += len(updated)

    def _new_ticket(self, row: TicketRow) -> Ticket:
        status = self.status_of[row.status]
        ticket = Ticket(project=self.project, number=self._number(row.number), status=status,
                        created_by=self.people.user(row.creator) or self.actor,
                        sort_order=self._sort_order(status, row.position))
        self._set_fields(ticket, row, status)
        ticket.created_at = row.created_at or timezone.now()
        ticket.updated_at = row.updated_at or ticket.created_at
        return ticket

    def _set_fields(self, ticket: Ticket, row: TicketRow, status: Status) -> None:
        ticket.title = self._cut(row.title.strip(), "title", row.where, "title")
        ticket.description = self._cut(row.description, "description", row.where, "description")
        ticket.type, ticket.priority, ticket.deadline = row.type, row.priority, row.deadline
        ticket.story_points = self._points(row)
        ticket.estimated_hours = row.estimated_hours
        ticket.archived_at, ticket.deleted_at = row.archived_at, row.deleted_at
        ticket.done_at = (row.done_at or row.updated_at or row.created_at or timezone.now()
                          ) if status.category == StatusCategory.DONE else None

    def _points(self, row: TicketRow) -> int | None:
        if row.story_points is None:
            return None
        if not 0 <= row.story_points <= 3:
            self.report.skip(row.where, f"story points {row.story_points} outside 0-3: dropped")
            return None
        return row.story_points

    def _update_tickets(self, rows: list[TicketRow], found: dict[str, int]) -> list[tuple[TicketRow, Ticket]]:
        if not rows:
            return []
        tickets = Ticket.objects.in_bulk([found[row.key] for row in rows])
        updated = []
        for row in rows:
            ticket, status = tickets[found[row.key]], self.status_of[row.status]
            if ticket.status_id != status.pk:
                ticket.sort_order = self._sort_order(status, row.position)
            ticket.status = status
            self._set_fields(ticket, row, status)
            ticket.updated_at = timezone.now()
            ticket.version += 1  # its detail changes: a new ETag (tickets/state.py)
            updated.append((row, ticket))
        Ticket.objects.bulk_update([ticket for _, ticket in updated], [*TICKET_FIELDS, "updated_at", "version"])
        return updated

    def _number(self, wanted: int | None) -> int:
        if self.new_project and wanted is not None and 0 < wanted < TEMPORARY_NUMBERS and wanted not in self.numbers_taken:
            self.numbers_taken.add(wanted)
            return wanted
        self.temporaries += 1
        return TEMPORARY_NUMBERS + self.temporaries

    def _sort_order(self, status: Status, position: int) -> int:
        """After what the column held before the import, in the source's order."""
        if status.pk not in self.column_ends:
            last = Ticket.objects.filter(status=status).aggregate(last=Max("sort_order"))["last"]
            self.column_ends[status.pk] = 0 if last is None else last + GAP
        return self.column_ends[status.pk] + position

    def _write_people_and_tags(self, pairs: list[tuple[TicketRow, Ticket]], *, replace: list[int]) -> None:
        """Assignees (matched people only) and tags of the tickets; those found again lose their old ones."""
        Assignees, Tags = Ticket.assignees.through, Ticket.tags.through
        if replace:
            Assignees.objects.filter(ticket_id__in=replace).delete()
            Tags.objects.filter(ticket_id__in=replace).delete()
        assignees, tags = set(), set()
        for row, ticket in pairs:
            assignees.update((ticket.pk, user.pk) for user in map(self.people.user, row.assignees) if user)
            tags.update((ticket.pk, tag.pk) for tag in map(self.tag, map(TagRow, row.tags)) if tag)
        Assignees.objects.bulk_create([Assignees(ticket_id=t, user_id=u) for t, u in sorted(assignees)],
                                      ignore_conflicts=True)
        Tags.objects.bulk_create([Tags(ticket_id=t, tag_id=g) for t, g in sorted(tags)], ignore_conflicts=True)

    # ---- what belongs to tickets ------------------------------------------------------------------------

    def _of_known_tickets(self, rows: list, what: str) -> list:
        known = []
        for row in rows:
            if row.ticket in self.ticket_ids:
                known.append(row)
            else:
                self.report.skip(row.where, f"{what} of a ticket that is not in the import: {row.ticket}")
        return known

    def _write_comments(self, rows: list[CommentRow]) -> None:
        rows = self._of_known_tickets(rows, "comment")
        found, new_rows = self._owned("comment", Comment, rows, {"ticket__project": self.project})
        comments = [Comment(ticket_id=self.ticket_ids[row.ticket], author=self.people.user(row.author) or self.actor,
                            message=self._cut(self.people.credited(row.author, row.text), "comment", row.where, "text"),
                            deleted_at=row.deleted_at) for row in new_rows]
        for row, comment in zip(new_rows, comments, strict=True):
            comment.created_at = row.created_at or timezone.now()
            comment.updated_at = row.updated_at or comment.created_at
        Comment.objects.bulk_create(comments)
        self._keep_times(Comment, comments, new_rows, ["created_at", "updated_at"])
        self._link("comment", [(row.key, comment.pk) for row, comment in zip(new_rows, comments, strict=True)])
        self.comment_ids.update(found)
        self.comment_ids.update((row.key, comment.pk) for row, comment in zip(new_rows, comments, strict=True))
        self.report.created["comments"] += len(comments)

    def _write_checklist_items(self, rows: list[ChecklistRow]) -> None:
        rows = self._of_known_tickets(rows, "checklist item")
        found, new_rows = self._owned("checklist_item", ChecklistItem, rows, {"ticket__project": self.project})
        items = [ChecklistItem(ticket_id=self.ticket_ids[row.ticket], sort_order=row.position, done=row.done,
                               text=self._cut(row.text, "checklist", row.where, "text")) for row in new_rows]
        ChecklistItem.objects.bulk_create(items)
        self._link("checklist_item", [(row.key, item.pk) for row, item in zip(new_rows, items, strict=True)])
        again = ChecklistItem.objects.in_bulk(found.values())
        for row in rows:
            if row.key in found:
                item = again[found[row.key]]
                item.text, item.done = self._cut(row.text, "checklist", row.where, "text"), row.done
        ChecklistItem.objects.bulk_update(list(again.values()), ["text", "done"])
        self.report.created["checklist_items"] += len(items)

    def _write_time_entrys(self, rows: list[TimeRow]) -> None:
        rows = self._of_known_tickets(rows, "time entry")
        _, new_rows = self._owned("time_entry", TimeEntry, rows, {"project": self.project})
        entries = []
        for row in new_rows:
            user = self.people.user(row.user)
            if user is None:
                self.report.skip(row.where, f"time of {row.user.label}, who is not a user here")
                continue
            # A timer still running would be a second running timer of its user: it comes paused.
            state = TimerState.PAUSED if row.is_running == TimerState.RUNNING else row.is_running
            entries.append((row, TimeEntry(
                ticket_id=self.ticket_ids[row.ticket], project=self.project, user=user, seconds=row.seconds,
                is_running=state, started_at=row.started_at, stopped_at=row.stopped_at,
                note=self._cut(row.note, "note", row.where, "note"), created_at=row.created_at or timezone.now())))
        TimeEntry.objects.bulk_create([entry for _, entry in entries])
        self._link("time_entry", [(row.key, entry.pk) for row, entry in entries])
        self.report.created["time_entries"] += len(entries)

    def _write_attachments(self, rows: list[FileRow]) -> None:
        rows = self._of_known_tickets(rows, "file")
        _, new_rows = self._owned("attachment", Attachment, rows, {"ticket__project": self.project})
        records = []
        for row in new_rows:
            record = self._stored(Attachment, row, ticket_id=self.ticket_ids[row.ticket],
                                  comment_id=self.comment_ids.get(row.comment) if row.comment else None)
            if record is not None:
                records.append((row, record))
        Attachment.objects.bulk_create([record for _, record in records])
        self._keep_times(Attachment, [record for _, record in records], [row for row, _ in records], ["created_at"])
        self._link("attachment", [(row.key, record.pk) for row, record in records])
        self.report.created["attachments"] += len(records)

    def _stored(self, model, row: FileRow, **owner):
        """The file checked as an upload is (type, content, size; and its sha256 when the source gives one) and
        stored; its unsaved record. A refused file is skipped and listed; a damaged one fails the import."""
        if row.size > MAX_FILE_SIZE:
            self.report.skip(row.where, f"{row.name}: larger than {MAX_FILE_SIZE // (1024 * 1024)} MB")
            return None
        with tempfile.SpooledTemporaryFile(max_size=1024 * 1024) as copy, row.open() as source:
            digest, size = hashlib.sha256(), 0
            while chunk := source.read(COPY_CHUNK):
                size += len(chunk)
                if size > MAX_FILE_SIZE:
                    raise TransferFailed(f"{row.where}: {row.name}: larger than its declared size")
                digest.update(chunk)
                copy.write(chunk)
            if size != row.size or (row.sha256 and digest.hexdigest() != row.sha256.lower()):
                raise TransferFailed(f"{row.where}: {row.name}: its bytes do not match its size and sha256")
            upload = File(copy, name=row.name)
            try:
                checked = accepted_upload(upload)
            except RuleViolation as refused:
                self.report.skip(row.where, refused.message.removeprefix("files: "))
                return None
            record = model(original_name=checked.name, filesize=size, mime_type=checked.mime_type,
                           uploaded_by=self.people.user(row.uploaded_by) or self.actor, **owner)
            upload.seek(0)
            record.file.save(checked.name, upload, save=False)  # under a generated name (stored_file_path)
            self.stored.append(record.file.name)
        record.created_at = row.created_at or timezone.now()
        self.progress.alive()
        return record

    def _keep_times(self, model, objects: list, rows: list, fields: list[str]) -> None:
        """bulk_create writes `now` into auto_now(_add) fields: the source's times are written back after it."""
        for obj, row in zip(objects, rows, strict=True):
            for field in fields:
                value = getattr(row, field, None)
                if value is not None:
                    setattr(obj, field, value)
        write_back(model, objects, fields)

    # ---- the documentation area (our own exports only: a few rows, written one by one) -----------------

    def folders(self, rows: list[FolderRow]) -> None:
        """Every folder, then each one's parent (the source may list a child before its parent)."""
        found, new_rows = self._owned("folder", Folder, rows, {"project": self.project})
        self.folder_ids.update(found)
        slugs = set(Folder.objects.live().filter(project=self.project).values_list("slug", flat=True))
        folders = []
        for row in new_rows:
            folder = Folder(project=self.project, title=self._cut(row.title, "title", row.where, "title"),
                            slug=_free(row.slug or slugify(row.title, allow_unicode=True) or "folder", slugs,
                                       keep=row.deleted_at is None),
                            sort_order=row.sort_order, deleted_at=row.deleted_at,
                            created_by=self.people.user(row.created_by) or self.actor)
            folders.append(folder)
        Folder.objects.bulk_create(folders)
        self._keep_times(Folder, folders, new_rows, ["created_at", "updated_at"])
        self._link("folder", [(row.key, folder.pk) for row, folder in zip(new_rows, folders, strict=True)])
        self.folder_ids.update((row.key, folder.pk) for row, folder in zip(new_rows, folders, strict=True))
        for row, folder in zip(new_rows, folders, strict=True):
            if row.parent and row.parent not in self.folder_ids:
                self.report.skip(row.where, f"parent folder {row.parent} is not in the import: placed at the root")
            folder.parent_id = self.folder_ids.get(row.parent)
        Folder.objects.bulk_update(folders, ["parent"])
        self.report.created["folders"] += len(folders)

    def article(self, row: ArticleRow) -> None:
        if not self._first_time("article", row.key, row.where):
            return
        found = self._linked("article", [row.key])
        if found and Article.objects.filter(pk=found[row.key], project=self.project).exists():
            return  # an article is written once; a repeated import leaves it as the team edited it since
        slugs = set(Article.objects.live().filter(project=self.project).values_list("slug", flat=True))
        article = Article.objects.create(
            project=self.project, folder_id=self.folder_ids.get(row.folder), sort_order=row.sort_order,
            title=self._cut(row.title, "title", row.where, "title"),
            slug=_free(row.slug or slugify(row.title, allow_unicode=True) or "article", slugs,
                       keep=row.deleted_at is None),
            content=self._cut(row.content, "article", row.where, "content"), deleted_at=row.deleted_at,
            created_by=self.people.user(row.created_by) or self.actor, updated_by=self.people.user(row.updated_by))
        self._keep_times(Article, [article], [row], ["created_at", "updated_at"])
        self._link("article", [(row.key, article.pk)])
        versions = [ArticleVersion(article=article, title=version.title[:255], content=version.content,
                                   edited_by=self.people.user(version.edited_by) or self.actor)
                    for version in row.versions]
        ArticleVersion.objects.bulk_create(versions)
        self._keep_times(ArticleVersion, versions, row.versions, ["created_at"])
        comments = [ArticleComment(article=article, user=self.people.user(comment.author) or self.actor,
                                   message=self.people.credited(comment.author, comment.text)[:20_000],
                                   deleted_at=comment.deleted_at) for comment in row.comments]
        ArticleComment.objects.bulk_create(comments)
        self._keep_times(ArticleComment, comments, row.comments, ["created_at"])
        files = [(file, record) for file in row.files
                 if (record := self._stored(ArticleAttachment, file, article=article)) is not None]
        ArticleAttachment.objects.bulk_create([record for _, record in files])
        self._keep_times(ArticleAttachment, [record for _, record in files], [file for file, _ in files],
                         ["created_at"])
        self.report.created["articles"] += 1
        self.report.created["attachments"] += len(files)

    # ---- the end --------------------------------------------------------------------------------------

    def finish(self) -> dict:
        """Write what is left, the blockers, the numbers and the new viewers; the report."""
        self.flush()
        self._write_blockers()
        self._renumber()
        self.people.add_viewers()
        if self.new_project and self.exact_columns:
            self.arrange_statuses()
        return self.report.as_dict(self.people)

    def _write_blockers(self) -> None:
        """Blockers between tickets of the import (or found by it); one that would close a cycle, or names a
        ticket the import does not have, is skipped and listed."""
        edges = defaultdict(set)  # blocker → the tickets it blocks
        for ticket_id, blocker_id in Blocker.objects.filter(ticket__project=self.project).values_list(
                "ticket_id", "blocker_id"):
            edges[blocker_id].add(ticket_id)
        new = []
        for blocked_key, blocker_key, where in self.blockers:
            blocked, blocker = self.ticket_ids.get(blocked_key), self.ticket_ids.get(blocker_key)
            if blocked is None or blocker is None:
                self.report.skip(where, f"blocker link to a ticket that is not in the import: "
                                        f"{blocker_key if blocker is None else blocked_key}")
            elif blocked == blocker or _reaches(edges, blocked, blocker):
                self.report.skip(where, f"{blocker_key} blocking {blocked_key} would close a cycle")
            elif blocked not in edges[blocker]:
                edges[blocker].add(blocked)
                new.append(Blocker(ticket_id=blocked, blocker_id=blocker))
        Blocker.objects.bulk_create(new, batch_size=BATCH, ignore_conflicts=True)

    def _renumber(self) -> None:
        """Tickets with a temporary number take the numbers after the highest, in the order written, and the
        project's counter moves past them: the next created ticket takes the number after."""
        tickets = Ticket.objects.filter(project=self.project)
        if self.new_project:
            highest = max((n for n in self.numbers_taken if n < TEMPORARY_NUMBERS), default=0)
            base = highest
            Project.objects.filter(pk=self.project.pk).update(last_ticket_number=highest + self.temporaries)
        else:
            counters = Project.objects.advance_counters(self.project.pk, last_ticket_number=self.temporaries)
            base = counters["last_ticket_number"] - self.temporaries
        if self.temporaries:
            tickets.filter(number__gt=TEMPORARY_NUMBERS).update(number=F("number") - TEMPORARY_NUMBERS + base)

    def _cut(self, text: str, limit: str, where: str, what: str) -> str:
        if len(text) <= LIMITS[limit]:
            return text
        self.report.skip(where, f"{what} longer than {LIMITS[limit]:,} characters: cut")
        return text[:LIMITS[limit]]


def write_back(model, objects: list, fields: list[str]) -> None:
    """Write these fields of saved objects, BATCH rows per UPDATE … FROM (VALUES …) (PostgreSQL, SQLite 3.33+).

    bulk_update builds a CASE expression per field whose Python cost, at this scale, is more than the whole
    insert's (21 of 39 s of a 2,000-card board); this is one plain statement per batch.
    """
    if not objects:
        return
    quote, meta = connection.ops.quote_name, model._meta
    table, columns = quote(meta.db_table), [meta.get_field(name) for name in fields]
    # PostgreSQL types a VALUES column from its values: an all-NULL one would be text.
    typed = (lambda column, place: f"CAST(v.column{place} AS {column.db_type(connection)})"
             if connection.vendor == "postgresql" else f"v.column{place}")
    assignments = ", ".join(f"{quote(column.column)} = {typed(column, index + 2)}" for index, column in enumerate(columns))
    row = f"({', '.join(['%s'] * (len(columns) + 1))})"
    with connection.cursor() as cursor:
        for start in range(0, len(objects), BATCH):
            batch = objects[start:start + BATCH]
            cursor.execute(
                f"UPDATE {table} SET {assignments} FROM (VALUES {', '.join([row] * len(batch))}) AS v "
                f"WHERE {table}.{quote(meta.pk.column)} = v.column1",
                [value for obj in batch for value in [
                    obj.pk, *(column.get_db_prep_value(getattr(obj, column.attname), connection) for column in columns)]])


def _reaches(edges: dict[int, set[int]], start: int, goal: int) -> bool:
    """Whether `goal` is reached from `start` following blocker → blocked links."""
    seen, stack = {start}, [start]
    while stack:
        for following in edges.get(stack.pop(), ()):
            if following == goal:
                return True
            if following not in seen:
                seen.add(following)
                stack.append(following)
    return False


def _free(slug: str, taken: set[str], *, keep: bool) -> str:
    """The slug, or the first free `slug-2`, `slug-3`, … among the live ones; a deleted row's is kept as it is."""
    slug = slug[:240]
    if not keep:
        return slug
    candidate, number = slug, 2
    while candidate in taken:
        candidate, number = f"{slug}-{number}", number + 1
    taken.add(candidate)
    return candidate

