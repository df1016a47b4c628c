"""Our own export (transfers.exporter): a zip of `project.json`, the stored files and `tickets.csv`.

project.json is read as a stream, one part at a time (a pass each), and each file straight from the zip when
it is stored. Imported as a new project it gives the project back: columns, tags, tickets with their numbers,
fields and order, checklists, comments, blockers, files, time entries and the documentation area.
"""

from collections.abc import Iterator
from decimal import Decimal, InvalidOperation
from pathlib import Path

from projects.models import StatusCategory

from ..archive import open_archive
from ..errors import TransferFailed
from ..progress import Progress
from ..rows import (
    ArticleCommentRow,
    ArticleRow,
    ChecklistRow,
    CommentRow,
    FileRow,
    FolderRow,
    Person,
    StatusRow,
    TagRow,
    TicketRow,
    TimeRow,
    VersionRow,
)
from ..writer import Writer
from . import CountingFile, json_items, mapping, parse_day, parse_time, text_of

LABEL = "our export"
FORMAT, VERSION = "tracker-export", 1
MANIFEST = "project.json"
PARTS = ["format", "version", "project", "statuses", "members", "tags", "tickets", "docs.folders", "docs.articles"]
PROJECT_SETTINGS = {"estimation_mode": {"story_points", "hours", "none"}}


class Export:
    """The zip and its manifest, read part by part; progress counted over the manifest's passes."""

    def __init__(self, path: Path, writer: Writer, progress: Progress):
        self.archive = open_archive(path)
        self.writer, self.report, self.progress = writer, writer.report, progress
        try:
            self.manifest = self.archive.getinfo(MANIFEST)
        except KeyError:
            raise TransferFailed(f"zip: no {MANIFEST}") from None
        self.passes = 0
        progress.start(self.manifest.file_size * len(PARTS))

    def items(self, prefix: str) -> Iterator:
        try:
            with self.archive.open(self.manifest) as raw:
                yield from json_items(CountingFile(raw, self.progress, self.passes * self.manifest.file_size),
                                      prefix, MANIFEST)
        finally:
            self.passes += 1

    def first(self, prefix: str):
        """The first item at `prefix`, the rest of the manifest left unread."""
        items = self.items(prefix)
        try:
            return next(items, None)
        finally:
            items.close()

    def opener(self, path, where: str):
        """How a file of the zip is opened when it is stored: a member the manifest names, which must exist."""
        if not isinstance(path, str):
            raise TransferFailed(f"{where}.path: no file in the zip")
        try:
            info = self.archive.getinfo(path)
        except KeyError:
            raise TransferFailed(f"{where}.path: no such file in the zip: {path[:200]}") from None
        return lambda: self.archive.open(info)


def read(path: Path, writer: Writer, progress: Progress) -> None:
    export = Export(path, writer, progress)
    with export.archive:
        found = (export.first("format"), export.first("version"))
        if found != (FORMAT, VERSION):
            raise TransferFailed(f"{MANIFEST}: not a tracker-export of version 1 (format {found[0]!r}, "
                                 f"version {found[1]!r})")
        origin = _project(export, writer)
        writer.exact_columns = True
        for index, status in enumerate(export.items("statuses.item")):
            _status(mapping(status, f"statuses[{index}]"), f"statuses[{index}]", writer)
        for index, member in enumerate(export.items("members.item")):
            writer.people.user(_person(mapping(member, f"members[{index}]").get("username")))
        for index, tag in enumerate(export.items("tags.item")):
            tag = mapping(tag, f"tags[{index}]")
            writer.tag(TagRow(name=text_of(tag.get("name"), where=f"tags[{index}].name"),
                              color=text_of(tag.get("color"), where=f"tags[{index}].color")))
        for index, ticket in enumerate(export.items("tickets.item")):
            _ticket(export, mapping(ticket, f"tickets[{index}]"), f"tickets[{index}]", origin)
        writer.flush()
        writer.folders([_folder(mapping(folder, f"docs.folders[{index}]"), f"docs.folders[{index}]", origin, export)
                        for index, folder in enumerate(export.items("docs.folders.item"))])
        for index, article in enumerate(export.items("docs.articles.item")):
            writer.article(_article(mapping(article, f"docs.articles[{index}]"), f"docs.articles[{index}]", origin,
                                    export))


def _project(export: Export, writer: Writer) -> str:
    """The exported project's id (what every key of this export begins with); its settings go to a new project."""
    project = mapping(export.first("project"), "project")
    if writer.new_project:
        target = writer.project
        target.description = text_of(project.get("description"), where="project.description")[:2000]
        if project.get("estimation_mode") in PROJECT_SETTINGS["estimation_mode"]:
            target.estimation_mode = project["estimation_mode"]
        target.docs_enabled = bool(project.get("docs_enabled", True))
        target.save(update_fields=["description", "estimation_mode", "docs_enabled"])
    return f"p{project.get('id')}"


def _status(status: dict, where: str, writer: Writer) -> None:
    slug = text_of(status.get("slug"), where=f"{where}.slug")
    if not slug:
        raise TransferFailed(f"{where}.slug: missing")
    writer.status(StatusRow(key=slug, slug=slug, label=text_of(status.get("label"), where=f"{where}.label") or slug,
                            category=_category(status.get("category"), where),
                            color=text_of(status.get("color"), where=f"{where}.color") or "#6c757d",
                            icon=text_of(status.get("icon"), where=f"{where}.icon"),
                            hidden=bool(status.get("hidden"))))


def _category(value, where: str) -> str:
    if value not in StatusCategory.values:
        raise TransferFailed(f"{where}.category: not one of {', '.join(StatusCategory.values)}")
    return value


def _ticket(export: Export, ticket: dict, where: str, origin: str) -> None:
    writer, report = export.writer, export.report
    number = ticket.get("number")
    if not isinstance(number, int) or isinstance(number, bool):
        raise TransferFailed(f"{where}.number: a whole number expected")
    key = f"{origin}:{number}"

    def time(name: str, place: str = where, item: dict = ticket):
        return parse_time(item.get(name), where=f"{place}.{name}", report=report)

    writer.ticket(TicketRow(
        key=key, where=where, number=number, title=text_of(ticket.get("title"), where=f"{where}.title"),
        description=text_of(ticket.get("description"), where=f"{where}.description"),
        status=text_of(ticket.get("status"), where=f"{where}.status"),
        type=_choice(ticket.get("type"), {"bug", "feature", "release"}, "feature", f"{where}.type", report),
        priority=_choice(ticket.get("priority"), {"urgent", "high", "medium", "low"}, None, f"{where}.priority",
                         report),
        deadline=parse_day(ticket.get("deadline"), where=f"{where}.deadline", report=report),
        story_points=ticket.get("story_points") if isinstance(ticket.get("story_points"), int) else None,
        estimated_hours=_hours(ticket.get("estimated_hours"), f"{where}.estimated_hours", report),
        position=_whole(ticket.get("sort_order"), f"{where}.sort_order"),
        created_at=time("created_at"), updated_at=time("updated_at"), archived_at=time("archived_at"),
        deleted_at=time("deleted_at"), done_at=time("done_at"), creator=_person(ticket.get("creator")),
        assignees=[_person(name) for name in ticket.get("assignees") or [] if name],
        tags=[text_of(name, where=f"{where}.tags") for name in ticket.get("tags") or []]))
    for index, item in enumerate(ticket.get("checklist") or []):
        place = f"{where}.checklist[{index}]"
        item = mapping(item, place)
        writer.checklist_item(ChecklistRow(
            key=f"{origin}:{item.get('id')}", ticket=key, where=place,
            text=text_of(item.get("text"), where=f"{place}.text"), done=bool(item.get("done")),
            position=_whole(item.get("sort_order"), f"{place}.sort_order")))
    for index, comment in enumerate(ticket.get("comments") or []):
        place = f"{where}.comments[{index}]"
        comment = mapping(comment, place)
        writer.comment(CommentRow(
            key=f"{origin}:{comment.get('id')}", ticket=key, where=place,
            text=text_of(comment.get("message"), where=f"{place}.message"), author=_person(comment.get("author")),
            created_at=time("created_at", place, comment), updated_at=time("updated_at", place, comment),
            deleted_at=time("deleted_at", place, comment)))
    for blocker in ticket.get("blockers") or []:
        writer.blocker(blocked=key, blocker=f"{origin}:{blocker}", where=f"{where}.blockers")
    for index, file in enumerate(ticket.get("attachments") or []):
        row = _file(export, mapping(file, f"{where}.attachments[{index}]"), f"{where}.attachments[{index}]", origin)
        if row is not None:
            row.ticket = key
            comment_id = file.get("comment_id")
            row.comment = f"{origin}:{comment_id}" if comment_id is not None else ""
            writer.file(row)
    for index, entry in enumerate(ticket.get("time_entries") or []):
        place = f"{where}.time_entries[{index}]"
        entry = mapping(entry, place)
        writer.time_entry(TimeRow(
            key=f"{origin}:{entry.get('id')}", ticket=key, where=place, user=_person(entry.get("user")) or Person(),
            seconds=_whole(entry.get("seconds"), f"{place}.seconds"),
            is_running=_choice(entry.get("is_running"), {0, 1, 2}, 0, f"{place}.is_running", report),
            started_at=time("started_at", place, entry), stopped_at=time("stopped_at", place, entry),
            note=text_of(entry.get("note"), where=f"{place}.note"), created_at=time("created_at", place, entry)))


def _file(export: Export, file: dict, where: str, origin: str) -> FileRow | None:
    if file.get("path") is None:
        export.report.skip(where, f"{file.get('name')}: its file was missing when it was exported")
        return None
    return FileRow(key=f"{origin}:{file.get('id')}", where=where, name=text_of(file.get("name"), where=f"{where}.name"),
                   size=_whole(file.get("size"), f"{where}.size"), open=export.opener(file.get("path"), where),
                   sha256=text_of(file.get("sha256"), where=f"{where}.sha256"),
                   uploaded_by=_person(file.get("uploaded_by")),
                   created_at=parse_time(file.get("created_at"), where=f"{where}.created_at", report=export.report))


def _folder(folder: dict, where: str, origin: str, export: Export) -> FolderRow:
    parent = folder.get("parent_id")
    return FolderRow(
        key=f"{origin}:{folder.get('id')}", where=where, title=text_of(folder.get("title"), where=f"{where}.title"),
        parent=f"{origin}:{parent}" if parent is not None else "", slug=text_of(folder.get("slug"), where=f"{where}.slug"),
        sort_order=_whole(folder.get("sort_order"), f"{where}.sort_order"), created_by=_person(folder.get("created_by")),
        created_at=parse_time(folder.get("created_at"), where=f"{where}.created_at", report=export.report),
        updated_at=parse_time(folder.get("updated_at"), where=f"{where}.updated_at", report=export.report),
        deleted_at=parse_time(folder.get("deleted_at"), where=f"{where}.deleted_at", report=export.report))


def _article(article: dict, where: str, origin: str, export: Export) -> ArticleRow:
    report = export.report
    folder = article.get("folder_id")
    files = []
    for index, file in enumerate(article.get("attachments") or []):
        row = _file(export, mapping(file, f"{where}.attachments[{index}]"), f"{where}.attachments[{index}]", origin)
        if row is not None:
            files.append(row)
    return ArticleRow(
        key=f"{origin}:{article.get('id')}", where=where, title=text_of(article.get("title"), where=f"{where}.title"),
        folder=f"{origin}:{folder}" if folder is not None else "", slug=text_of(article.get("slug"), where=f"{where}.slug"),
        content=text_of(article.get("content"), where=f"{where}.content"),
        sort_order=_whole(article.get("sort_order"), f"{where}.sort_order"),
        created_by=_person(article.get("created_by")), updated_by=_person(article.get("updated_by")),
        created_at=parse_time(article.get("created_at"), where=f"{where}.created_at", report=report),
        updated_at=parse_time(article.get("updated_at"), where=f"{where}.updated_at", report=report),
        deleted_at=parse_time(article.get("deleted_at"), where=f"{where}.deleted_at", report=report),
        versions=[VersionRow(title=text_of(version.get("title"), where=f"{where}.versions"),
                             content=text_of(version.get("content"), where=f"{where}.versions"),
                             edited_by=_person(version.get("edited_by")),
                             created_at=parse_time(version.get("created_at"), where=f"{where}.versions",
                                                   report=report))
                  for version in (mapping(v, f"{where}.versions") for v in article.get("versions") or [])],
        comments=[ArticleCommentRow(key=f"{origin}:{comment.get('id')}", where=f"{where}.comments",
                                    text=text_of(comment.get("message"), where=f"{where}.comments"),
                                    author=_person(comment.get("author")),
                                    created_at=parse_time(comment.get("created_at"), where=f"{where}.comments",
                                                          report=report),
                                    deleted_at=parse_time(comment.get("deleted_at"), where=f"{where}.comments",
                                                          report=report))
                  for comment in (mapping(c, f"{where}.comments") for c in article.get("comments") or [])],
        files=files)


def _person(username) -> Person | None:
    return Person(username=username) if isinstance(username, str) and username else None


def _whole(value, where: str) -> int:
    if value is None:
        return 0
    if not isinstance(value, int) or isinstance(value, bool):
        raise TransferFailed(f"{where}: a whole number expected")
    return value


def _choice(value, allowed: set, default, where: str, report):
    if value is None or value in allowed:
        return default if value is None else value
    report.skip(where, f"{str(value)[:40]!r} is not one of {', '.join(map(str, sorted(allowed, key=str)))}: "
                       f"{default!r} instead")
    return default


def _hours(value, where: str, report) -> Decimal | None:
    if value is None:
        return None
    try:
        hours = Decimal(str(value))
    except InvalidOperation:
        report.skip(where, f"{str(value)[:20]!r} is not a number: left out")
        return None
    if not hours.is_finite() or abs(hours) >= 100_000:
        report.skip(where, f"{value} hours is out of range: left out")
        return None
    return hours.quantize(Decimal("0.01"))

