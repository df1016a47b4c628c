"""A project holding something of everything an export carries, and a snapshot of a project to compare two by:
everything but ids, people by username."""

import hashlib
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

from django.core.files.base import ContentFile

from docs_area.models import Article, ArticleVersion, Folder
from projects.models import Project, Status
from projects.roles import Role
from tests.factories import (
    ArticleAttachmentFactory,
    ArticleCommentFactory,
    ArticleFactory,
    AttachmentFactory,
    BlockerFactory,
    ChecklistItemFactory,
    CommentFactory,
    FolderFactory,
    MembershipFactory,
    ProjectFactory,
    StatusFactory,
    TagFactory,
    TicketFactory,
    TimeEntryFactory,
    UserFactory,
)
from tests.sample_files import png
from tickets.models import Comment, Ticket
from timetracking.models import TimerState

T0 = datetime(2024, 5, 6, 7, 8, 9, 123456, UTC)


def rich_project(owner=None) -> Project:
    project = ProjectFactory(name="Apollo", prefix="APL", description="To the moon", estimation_mode="story_points",
                             **({"owner": owner} if owner else {}))
    owner = project.owner
    dev = MembershipFactory(project=project, role=Role.EDITOR, user=UserFactory(username="margaret")).user
    Status.objects.filter(project=project, slug="review").update(label="QA", color="#123456", hidden=True)
    StatusFactory(project=project, slug="blocked_ext", label="Blocked (external)", category="todo", sort_order=9)
    ui, api = TagFactory(project=project, name="ui", color="#ff0000"), TagFactory(project=project, name="api")
    todo, doing, done = (Status.objects.get(project=project, slug=slug) for slug in ("todo", "in_progress", "done"))
    first = TicketFactory(project=project, status=todo, title="Launch =SUM(A1)", description="**Go**", type="bug",
                          priority="urgent", deadline=date(2024, 7, 20), story_points=3, sort_order=2048,
                          tags=[ui, api], assignees=[owner, dev])
    second = TicketFactory(project=project, status=todo, title="Second", sort_order=1024, created_by=dev)
    third = TicketFactory(project=project, status=done, title="Done one", done_at=T0, estimated_hours=Decimal("1.50"))
    archived = TicketFactory(project=project, status=doing, title="Shelved", archived_at=T0)
    gone = TicketFactory(project=project, status=doing, title="Deleted", deleted_at=T0)
    for index, ticket in enumerate([first, second, third, archived, gone]):
        Ticket.objects.filter(pk=ticket.pk).update(created_at=T0 + timedelta(hours=index),
                                                   updated_at=T0 + timedelta(days=1, hours=index))
    ChecklistItemFactory(ticket=first, text="Fuel", done=True, sort_order=2)
    ChecklistItemFactory(ticket=first, text="Count down", sort_order=1)
    said = CommentFactory(ticket=first, author=dev, message="@ada ready?")
    CommentFactory(ticket=first, author=owner, message="-1 from me")
    CommentFactory(ticket=second, author=owner, message="withdrawn", deleted_at=T0)
    for index, comment in enumerate(Comment.objects.filter(ticket__project=project).order_by("pk")):
        Comment.objects.filter(pk=comment.pk).update(created_at=T0 + timedelta(minutes=index),
                                                     updated_at=T0 + timedelta(minutes=index, seconds=5))
    BlockerFactory(ticket=first, blocker=second)
    BlockerFactory(ticket=first, blocker=third)
    AttachmentFactory(ticket=first, original_name="plan.txt", file=ContentFile(b"the plan", name="plan.txt"), filesize=8)
    AttachmentFactory(ticket=first, comment=said, original_name="pixel.png", file=ContentFile(png(), name="pixel.png"),
                      filesize=len(png()), mime_type="image/png", uploaded_by=dev)
    TimeEntryFactory(ticket=first, user=dev, seconds=45 * 60, note="countdown", started_at=T0,
                     stopped_at=T0 + timedelta(minutes=45), created_at=T0)
    TimeEntryFactory(ticket=third, user=owner, seconds=60 * 60, created_at=T0 + timedelta(days=2))
    TimeEntryFactory(ticket=second, user=dev, seconds=120, is_running=TimerState.PAUSED, started_at=T0,
                     created_at=T0 + timedelta(days=3))
    guides = FolderFactory(project=project, title="Guides", slug="guides", sort_order=1)
    inner = FolderFactory(project=project, parent=guides, title="Inner", slug="inner", sort_order=0)
    FolderFactory(project=project, title="Old", slug="old", deleted_at=T0)
    article = ArticleFactory(project=project, folder=inner, title="Launch guide", slug="launch-guide",
                             content="# Steps\n\n1. Go", created_by=dev, updated_by=owner)
    ArticleFactory(project=project, title="Readme", slug="readme", content="Hi", sort_order=3)
    ArticleVersion.objects.create(article=article, title="Launch", content="draft", edited_by=dev)
    ArticleCommentFactory(article=article, user=owner, message="Nice")
    ArticleAttachmentFactory(article=article, original_name="checklist.md",
                             file=ContentFile(b"- [ ] go", name="checklist.md"), filesize=8, mime_type="text/markdown")
    return project


def _time(value):
    return value.astimezone(UTC).isoformat() if value else None


def _sha(record) -> str:
    with record.file.open("rb") as stored:
        return hashlib.sha256(stored.read()).hexdigest()


def snapshot(project: Project) -> dict:
    """What an export must carry and an import give back, by value."""
    project = Project.objects.get(pk=project.pk)
    tickets = {}
    for ticket in Ticket.objects.filter(project=project).select_related("status", "created_by").order_by("number"):
        tickets[ticket.number] = {
            "fields": [ticket.title, ticket.description, ticket.status.slug, ticket.type, ticket.priority,
                       ticket.deadline, ticket.story_points, ticket.estimated_hours],
            "times": [_time(ticket.created_at), _time(ticket.updated_at), _time(ticket.archived_at),
                      _time(ticket.deleted_at), _time(ticket.done_at)],
            "creator": ticket.created_by.username,
            "assignees": sorted(user.username for user in ticket.assignees.all()),
            "tags": sorted(tag.name for tag in ticket.tags.all()),
            "checklist": list(ticket.checklist_items.order_by("sort_order", "id").values_list("text", "done")),
            "comments": [(c.author.username, c.message, _time(c.created_at), _time(c.updated_at), _time(c.deleted_at))
                         for c in ticket.comments.order_by("created_at", "id").select_related("author")],
            "blockers": sorted(link.blocker.number for link in ticket.blocked_by_links.select_related("blocker")),
            "attachments": sorted((a.original_name, a.mime_type, a.filesize, _sha(a), a.uploaded_by.username,
                                   a.comment.message if a.comment else None) for a in ticket.attachments.all()),
            "time": sorted((e.user.username, e.seconds, e.is_running, _time(e.started_at), _time(e.stopped_at), e.note,
                            _time(e.created_at)) for e in ticket.time_entries.select_related("user")),
        }
    columns = {status.slug: list(Ticket.objects.active().filter(status=status).order_by("sort_order", "id")
                                 .values_list("number", flat=True)) for status in project.statuses.all()}
    folders = {folder.pk: folder for folder in Folder.objects.filter(project=project)}

    def path(folder_id):
        names = []
        while folder_id is not None:
            names.insert(0, folders[folder_id].title)
            folder_id = folders[folder_id].parent_id
        return "/".join(names)

    return {
        "project": [project.description, project.estimation_mode, project.docs_enabled, project.last_ticket_number],
        "statuses": list(project.statuses.order_by("sort_order", "id").values_list(
            "slug", "label", "color", "icon", "category", "hidden")),
        "tags": list(project.tags.order_by("sort_order", "id").values_list("name", "color")),
        "tickets": tickets, "columns": columns,
        "folders": sorted((path(f.pk), f.slug, f.sort_order, f.created_by.username, _time(f.deleted_at))
                          for f in folders.values()),
        "articles": sorted((path(a.folder_id), a.title, a.slug, a.content, a.sort_order, a.created_by.username,
                            a.updated_by.username if a.updated_by else None, _time(a.created_at), _time(a.deleted_at),
                            [(v.title, v.content, v.edited_by.username, _time(v.created_at))
                             for v in a.versions.order_by("created_at", "id")],
                            [(c.user.username, c.message, _time(c.created_at), _time(c.deleted_at))
                             for c in a.comments.order_by("created_at", "id")],
                            sorted((f.original_name, f.filesize, _sha(f)) for f in a.attachments.all()))
                           for a in Article.objects.filter(project=project)),
    }
