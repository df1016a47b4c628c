from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import timedelta

import orjson
from django.db.models import (
    CharField,
    Func,
    IntegerField,
    OuterRef,
    QuerySet,
    Subquery,
)
from django.db.models.functions import Cast
from django.utils import timezone

from accounts.models import User, shown_name
from core.queries import PreparedLookup, PreparedRows, Read, rows_of, rows_together
from core.rows import found
from core.time import timestamp
from projects.models import Project, Status, StatusCategory, Tag

from .filters import TicketListQuery
from .models import Activity, Attachment, Blocker, ChecklistItem, Comment, Ticket

ARCHIVED_LIST_LIMIT = 100
FEW_TICKETS = 100
VELOCITY_WINDOW = timedelta(days=7)


def count_of(model, **filters) -> Subquery:
    """A per-ticket count as a subquery: several of them never multiply each other's rows. A bare COUNT
    (no GROUP BY) answers 0 for a ticket with none, and costs the ORM less to build than an annotation."""
    rows = model.objects.filter(ticket=OuterRef("pk"), **filters).order_by().values(n=Func("pk", function="COUNT"))
    return Subquery(rows, output_field=IntegerField())


class UtcTimestamp(Func):
    """A datetime column as its `ts` text (core.time.timestamp), written by the database.

    Lists and boards show thousands of them: text costs the driver less than a datetime, and
    Python then has nothing to format. Seconds are cut, not rounded, as strftime does.
    """

    output_field = CharField()

    def as_postgresql(self, compiler, connection, **extra):
        return self.as_sql(compiler, connection, template="to_char(%(expressions)s AT TIME ZONE 'UTC', "
                                                          "'YYYY-MM-DD HH24:MI:SS')", **extra)

    def as_sqlite(self, compiler, connection, **extra):
        # Django stores a datetime in SQLite as UTC text, `YYYY-MM-DD HH:MM:SS[.ffffff]`.
        return self.as_sql(compiler, connection, template="substr(%(expressions)s, 1, 19)", **extra)


# A ticket row, as the list shape reads it by name (serializers.ticket_shapes); a board row adds its
# creator and counts.
LIST_COLUMNS = ("id", "number", "title", "status__slug", "type", "priority", "deadline", "created", "sort_order")
BOARD_COLUMNS = (*LIST_COLUMNS, "created_by_id", "reaction_count", "checklist_total", "checklist_done")


@dataclass
class TicketRows:
    """Tickets of one project as plain rows (dicts of LIST_COLUMNS or BOARD_COLUMNS), with the tags and users
    they refer to.

    No model instance per ticket: on a board of thousands, building them was most of the time.
    """

    rows: list[dict]
    board: bool
    prefix: str
    tag_ids: dict[int, list[int]]
    tags: dict[int, Tag]
    assignee_ids: dict[int, list[int]] = field(default_factory=dict)
    users: dict[int, User] = field(default_factory=dict)


def ticket_rows(tickets: QuerySet[Ticket], *, prefix: str, board: bool, tags: Iterable[Tag] | None = None,
                users: Iterable[User] | None = None) -> TicketRows:
    """`tickets` (of one project, whose prefix is given, in their order) as rows of the list shape, or of the
    board shape with `board`.

    `tags` and `users` are those the caller has loaded anyway (the board: the project's tags and
    members); any other tag or user a ticket refers to (a former member's assignment, a deleted
    ticket in a frame) is loaded here, so the shape never depends on who is a member now.
    """
    if board:
        tickets = _with_card_counts(tickets)
    rows = list(tickets.annotate(created=UtcTimestamp("created_at"))
                .values(*(BOARD_COLUMNS if board else LIST_COLUMNS)))
    if not rows:
        return TicketRows(rows=[], board=board, prefix=prefix, tag_ids={}, tags={})
    # A board's thousands of ids would make a long IN (...): they are given as a subquery instead. A few
    # (a frame's) are given as they are, which spares building that subquery, and so are a page's (at
    # most its limit: a sliced query keeps its order).
    few = len(rows) <= FEW_TICKETS or tickets.query.is_sliced
    ids = [row["id"] for row in rows] if few else tickets.order_by().values("pk")
    return _ticket_rows_of(rows, prefix=prefix, board=board, tag_pairs=_tag_pairs(ids),
                           assignee_pairs=_assignee_pairs(ids) if board else (), tags=tags, users=users)


def _with_card_counts(tickets: QuerySet[Ticket]) -> QuerySet[Ticket]:
    return tickets.annotate(
        reaction_count=count_of(Comment, deleted_at__isnull=True),
        checklist_total=count_of(ChecklistItem),
        checklist_done=count_of(ChecklistItem, done=True),
    )


def _tag_pairs(ticket_ids) -> QuerySet:
    return Ticket.tags.through.objects.filter(ticket__in=ticket_ids).values_list("ticket_id", "tag_id")


def _assignee_pairs(ticket_ids) -> QuerySet:
    return Ticket.assignees.through.objects.filter(ticket__in=ticket_ids).order_by("user_id").values_list(
        "ticket_id", "user_id")


def _ticket_rows_of(rows: list[dict], *, prefix: str, board: bool, tag_pairs: Iterable[tuple],
                    assignee_pairs: Iterable[tuple], tags: Iterable[Tag] | None,
                    users: Iterable[User] | None) -> TicketRows:
    """TicketRows of the rows read and the (ticket id, tag id) and (ticket id, user id) pairs of those rows."""
    tags_by_id = {tag.pk: tag for tag in tags} if tags is not None else {}
    tag_ids = _pairs(tag_pairs)
    missing_tags = {tag_id for ids_ in tag_ids.values() for tag_id in ids_} - tags_by_id.keys()
    if missing_tags:
        tags_by_id.update((tag.pk, tag) for tag in Tag.objects.filter(pk__in=missing_tags))
    rank = {pk: index for index, pk in enumerate(
        sorted(tags_by_id, key=lambda pk: (tags_by_id[pk].sort_order, pk)))}
    for ticket_tags in tag_ids.values():
        ticket_tags.sort(key=rank.__getitem__)
    result = TicketRows(rows=rows, board=board, prefix=prefix, tag_ids=tag_ids, tags=tags_by_id)
    if board:
        result.assignee_ids = _pairs(assignee_pairs)
        result.users = {user.pk: user for user in users} if users is not None else {}
        needed = {row["created_by_id"] for row in rows}
        needed.update(user_id for ids_ in result.assignee_ids.values() for user_id in ids_)
        missing_users = needed - result.users.keys()
        if missing_users:
            result.users.update((user.pk, user) for user in User.objects.filter(pk__in=missing_users)
                                .only("id", "username", "name", "avatar_url"))
    return result


def list_row(ticket: Ticket) -> dict:
    """A ticket instance (its status loaded) as a row of LIST_COLUMNS."""
    return {"id": ticket.pk, "number": ticket.number, "title": ticket.title, "status__slug": ticket.status.slug,
            "type": ticket.type, "priority": ticket.priority, "deadline": ticket.deadline,
            "created": timestamp(ticket.created_at), "sort_order": ticket.sort_order}


def new_ticket_rows(*, ticket: Ticket, tags: Iterable[Tag], checklist_total: int) -> TicketRows:
    """A ticket its creation just wrote, in the board shape, from what the creation holds: nothing to read
    back, since a new ticket has no comment, assignee or done checklist item yet."""
    tags = sorted(tags, key=lambda tag: (tag.sort_order, tag.pk))
    row = {**list_row(ticket), "created_by_id": ticket.created_by_id, "reaction_count": 0,
           "checklist_total": checklist_total, "checklist_done": 0}
    return TicketRows(rows=[row], board=True, prefix=ticket.project.prefix, tag_ids={ticket.pk: [tag.pk for tag in tags]},
                      tags={tag.pk: tag for tag in tags}, users={ticket.created_by_id: ticket.created_by})


def _pairs(pairs: Iterable[tuple]) -> dict[int, list[int]]:
    grouped = defaultdict(list)
    for ticket_id, other_id in pairs:
        grouped[ticket_id].append(other_id)
    return grouped


def ticket_page(*, project: Project, query: TicketListQuery) -> tuple[TicketRows, str | None]:
    """The list's tickets that `query` selects, a page of them when it asks for pages; with the cursor of the
    next page (None on the last, or without pages)."""
    rows = ticket_rows(query.page(), prefix=project.prefix, board=False)
    if not query.paged or len(rows.rows) <= query.limit:
        return rows, None
    del rows.rows[query.limit:]
    return rows, query.cursor_after(rows.rows[-1])


def _board_cards(project: int) -> QuerySet[Ticket]:
    return Ticket.objects.active().filter(project_id=project).order_by("sort_order", "id")


# The board's cards, their tags and their assignees: compiled once and sent in one round trip (every board
# request reads them; building these three queries cost the ORM more than a small board's rows).
_board_reads = (
    PreparedRows(lambda project: _with_card_counts(_board_cards(project)).annotate(
        created=UtcTimestamp("created_at")).values_list(*BOARD_COLUMNS)),
    PreparedRows(lambda project: _tag_pairs(_board_cards(project).order_by().values("pk"))),
    PreparedRows(lambda project: _assignee_pairs(_board_cards(project).order_by().values("pk"))),
)


def board_tickets(*, project: Project, tags: Iterable[Tag], users: Iterable[User]) -> TicketRows:
    rows, tag_pairs, assignee_pairs = rows_together(*((read, {"project": project.pk}) for read in _board_reads))
    return _ticket_rows_of([dict(zip(BOARD_COLUMNS, row, strict=True)) for row in rows], prefix=project.prefix,
                           board=True, tag_pairs=tag_pairs, assignee_pairs=assignee_pairs, tags=tags, users=users)


def board_tickets_by_id(*, project: Project, ticket_ids: Iterable[int], users: Iterable[User] = ()) -> TicketRows:
    """Tickets of the project in their board shape whatever their state (a frame may announce a deletion);
    `users`: any the caller holds (the actor, often their creator or assignee), not read again."""
    return ticket_rows(Ticket.objects.filter(project=project, pk__in=list(ticket_ids)).order_by("sort_order", "id"),
                       prefix=project.prefix, board=True, users=users)


def velocity(*, project: Project) -> int:
    """Tickets that entered a done column in the last 7 days and are still in one."""
    return Ticket.objects.live().filter(
        project=project, status__category=StatusCategory.DONE, done_at__gte=timezone.now() - VELOCITY_WINDOW
    ).count()


def open_ticket_count(*, project: Project) -> int:
    return Ticket.objects.active().filter(project=project).exclude(status__category=StatusCategory.DONE).count()


# A creation's column when it names none: compiled once, and read in the round trip of the caller's membership.
first_status = PreparedLookup(Status, lambda statuses, project: statuses.filter(project_id=project),
                              first_by=("sort_order", "id"))


# Every request on one ticket makes this lookup: compiled once.
_live_ticket_by_number = PreparedLookup(
    Ticket, lambda tickets, project, number: tickets.live().filter(project_id=project, number=number),
    related=("status", "created_by"))


def live_ticket(*, ticket_id: int) -> Ticket:
    """A live ticket by its global id, for views that reach the project through it."""
    return found(Ticket.objects.live().select_related("project", "status").filter(pk=ticket_id), "ticket not found")


def _live_blocker_links() -> QuerySet[Blocker]:
    return Blocker.objects.filter(blocker__deleted_at__isnull=True).select_related("blocker__status").order_by(
        "blocker__number")


def ticket_blockers(*, ticket: Ticket) -> QuerySet[Blocker]:
    """The Blocker entries of a ticket, as its detail lists them."""
    return _live_blocker_links().filter(ticket=ticket)


def _shown_attachments() -> QuerySet[Attachment]:
    """Attachments minus those of deleted comments, which go with their comment."""
    return Attachment.objects.filter(comment__deleted_at__isnull=True)


# What a ticket's detail shows besides the ticket's own columns, each part's rows as JSON objects keyed as
# the detail shows them: one statement, compiled once (every detail reads it in the round trip of its
# membership and ticket), found by project and number.
DETAIL_PARTS = ("tags", "assignees", "checklist", "comments", "blockers", "attachments", "blocker_versions")
_part_rows = PreparedRows(lambda project, number: Ticket.objects.filter(project_id=project, number=number).values_list(
    rows_of(Tag.objects.filter(tickets=OuterRef("pk")), ordering=("sort_order", "id"),
            id="id", name="name", color="color"),
    rows_of(User.objects.filter(assigned_tickets=OuterRef("pk")), ordering=("id",),
            id="id", name=shown_name("name", "username")),
    rows_of(ChecklistItem.objects.filter(ticket=OuterRef("pk")), ordering=("sort_order", "id"),
            id="id", text="text", done=Cast("done", IntegerField())),
    rows_of(Comment.objects.filter(ticket=OuterRef("pk"), deleted_at__isnull=True), ordering=("created_at", "id"),
            id="id", message="message", user_id="author_id",
            user_name=shown_name("author__name", "author__username"), created_at=UtcTimestamp("created_at")),
    rows_of(_live_blocker_links().filter(ticket=OuterRef("pk")), ordering=("blocker__number",),
            id="blocker_id", title="blocker__title", status="blocker__status__slug",
            project_ticket_number="blocker__number"),
    rows_of(_shown_attachments().filter(ticket=OuterRef("pk")), ordering=("id",),
            id="id", ticket_id="ticket_id", original_name="original_name", filesize="filesize",
            mime_type="mime_type"),
    # Not shown: what the ETag is made of besides the ticket's own version (tickets.state.detail_etag).
    rows_of(_live_blocker_links().filter(ticket=OuterRef("pk")), ordering=("blocker_id",),
            id="blocker_id", version="blocker__version")))


@dataclass(frozen=True)
class TicketScope:
    """What a request on `/projects/{project_id}/tickets/{number}` reads of the ticket before its handler
    runs: the live ticket, archived ones included (None when there is none), and for the ticket's detail
    its parts."""

    ticket: Ticket | None
    parts: dict[str, list[dict]] | None  # by name, DETAIL_PARTS


def ticket_reads(*, project_id: int, number: int, parts: bool) -> list[Read]:
    """The reads of a TicketScope, to send in the round trip of the caller's token and membership."""
    key = {"project": project_id, "number": number}
    return [_live_ticket_by_number.call(**key), *([(_part_rows, key)] if parts else [])]


def ticket_scope(rows: list[list[tuple]], *, project: Project) -> TicketScope:
    """The TicketScope of the rows of ticket_reads(), in a project the caller is a member of: the view
    looks at them only once the membership is found."""
    ticket_rows, *part_rows = rows
    ticket = _live_ticket_by_number.instance(ticket_rows)
    if ticket is None or part_rows == [[]]:  # none, or removed between the two statements
        return TicketScope(None, None)
    ticket.project = project
    parts = dict(zip(DETAIL_PARTS, map(orjson.loads, part_rows[0][0]), strict=True)) if part_rows else None
    if parts is not None:
        parts["blocker_versions"] = [(blocker["id"], blocker["version"]) for blocker in parts["blocker_versions"]]
    return TicketScope(ticket, parts)


def archived_tickets(*, project: Project, title_query: str = "") -> QuerySet[Ticket]:
    tickets = (Ticket.objects.live().filter(project=project, archived_at__isnull=False)
               .select_related("project", "status").order_by("-archived_at", "-id"))
    if len(title_query) >= 2:
        tickets = tickets.filter(title__icontains=title_query)
    return tickets[:ARCHIVED_LIST_LIMIT]


def column_ticket_ids(*, project: Project, status) -> list[int]:
    return list(Ticket.objects.active().filter(project=project, status=status)
                .order_by("sort_order", "id").values_list("pk", flat=True))


def ticket_history(*, ticket: Ticket) -> QuerySet[Activity]:
    return Activity.objects.filter(ticket=ticket).select_related("actor").order_by("-created_at", "-id")


def live_comment(*, comment_id: int) -> Comment:
    """A comment that is not deleted, on a ticket that is not deleted, with its ticket."""
    return found(Comment.objects.select_related("ticket")
                 .filter(pk=comment_id, deleted_at__isnull=True, ticket__deleted_at__isnull=True), "comment not found")


def checklist_item(*, item_id: int) -> ChecklistItem:
    """A checklist item of a ticket that is not deleted, with its ticket."""
    return found(ChecklistItem.objects.select_related("ticket").filter(pk=item_id, ticket__deleted_at__isnull=True),
                 "checklist item not found")


def live_attachment(*, attachment_id: int) -> Attachment:
    """An attachment still shown on a ticket that is not deleted, with its ticket."""
    return found(_shown_attachments().select_related("ticket").filter(pk=attachment_id, ticket__deleted_at__isnull=True),
                 "attachment not found")
