"""What a write to a ticket holds: the ticket read once, under its row lock, with everything the write derives
from it (its status, tags, assignees and creator, its card's counts, the versions of its blockers), so that
the UPDATE, the history entry, the board frame, the event row, the webhook outbox, the notifications and the
answer are all built from this one read (lock → change → derive → announce, ARCHITECTURE.md).

The read is one statement: the ticket's own columns, locked (FOR NO KEY UPDATE, without a join: core.rows
says why), and the rest as columns of it. Those columns are read in the statement's snapshot, taken before
it waited for the lock: had a write to the ticket committed meanwhile, they would miss it, while the locked
row is the new one. Every write adds one to the ticket's `version` in its own UPDATE, so the version as the
snapshot saw it tells: when it differs from the locked row's, the read runs again (holding the lock now, in
a new snapshot that sees that write).
"""

from dataclasses import dataclass, field

import orjson
from django.db import DEFAULT_DB_ALIAS, transaction
from django.db.models import OuterRef, QuerySet, Subquery
from django.http import Http404

from accounts.models import User
from core.api.conditional import etag_of
from core.queries import PreparedRows, Read, rows_of, rows_together
from projects.models import Project, Status, Tag

from .models import Blocker, ChecklistItem, Comment, Ticket
from .selectors import TicketRows, count_of, list_row

TICKET_FIELDS = tuple(field.attname for field in Ticket._meta.concrete_fields)
_STATUS_FIELDS = ("id", "project_id", "slug", "label", "color", "icon", "category", "hidden", "sort_order")
_PERSON_FIELDS = ("id", "username", "name", "avatar_url")
_TAG_FIELDS = ("id", "project_id", "name", "color", "sort_order")


def _person_rows(users: QuerySet[User]):
    return rows_of(users, ordering=("id",), **{name: name for name in _PERSON_FIELDS})


def _locked_state(tickets: QuerySet[Ticket]) -> QuerySet[Ticket]:
    """The state's one statement, for the live ticket `tickets` selects."""
    return tickets.select_for_update(no_key=True).annotate(
        state_status=rows_of(Status.objects.filter(pk=OuterRef("status_id")), ordering=("id",),
                             **{name: name for name in _STATUS_FIELDS}),
        state_creator=_person_rows(User.objects.filter(pk=OuterRef("created_by_id"))),
        state_assignees=_person_rows(User.objects.filter(assigned_tickets=OuterRef("pk"))),
        state_tags=rows_of(Tag.objects.filter(tickets=OuterRef("pk")), ordering=("sort_order", "id"),
                           **{name: name for name in _TAG_FIELDS}),
        state_blockers=rows_of(Blocker.objects.filter(ticket=OuterRef("pk"), blocker__deleted_at__isnull=True),
                               ordering=("blocker_id",), id="blocker_id", version="blocker__version"),
        state_reactions=count_of(Comment, deleted_at__isnull=True),
        state_checklist_total=count_of(ChecklistItem),
        state_checklist_done=count_of(ChecklistItem, done=True),
        state_seen_version=Subquery(Ticket.objects.filter(pk=OuterRef("pk")).values("version")),
    ).values_list(*TICKET_FIELDS, "state_status", "state_creator", "state_assignees", "state_tags", "state_blockers",
                  "state_reactions", "state_checklist_total", "state_checklist_done", "state_seen_version")


# Compiled once each: every write to a ticket reads one of them.
_by_number = PreparedRows(lambda project, number: _locked_state(Ticket.objects.live().filter(project_id=project,
                                                                                               number=number)))
_by_id = PreparedRows(lambda ticket: _locked_state(Ticket.objects.live().filter(pk=ticket)))
_deleted_too_by_id = PreparedRows(lambda ticket: _locked_state(Ticket.objects.filter(pk=ticket)))


def detail_etag(ticket_id: int, version: int, blocker_versions: list[tuple[int, int]], *,
                rendered: bool = False) -> str:
    """The ETag of a ticket's detail: its version and its blockers' (the detail shows their titles and
    columns), and whether the description comes rendered too. Never the representation itself: a write
    answers it without building one."""
    return etag_of(ticket_id, version, blocker_versions, rendered)


@dataclass
class TicketState:
    """A live ticket as a write holds it, locked; the write changes it in place, then derives from it."""

    ticket: Ticket  # its status and project loaded
    tags: list[Tag]
    assignees: list[User]  # by id
    creator: User
    reaction_count: int
    checklist_total: int
    checklist_done: int
    blocker_versions: list[tuple[int, int]] = field(default_factory=list)

    @property
    def etag(self) -> str:
        return detail_etag(self.ticket.pk, self.ticket.version, self.blocker_versions)

    def board_rows(self) -> TicketRows:
        """The ticket in its board shape as it stands now (tickets.serializers.ticket_shapes makes the shape)."""
        ticket = self.ticket
        row = {**list_row(ticket), "created_by_id": ticket.created_by_id, "reaction_count": self.reaction_count,
               "checklist_total": self.checklist_total, "checklist_done": self.checklist_done}
        users = {user.pk: user for user in (self.creator, *self.assignees)}
        return TicketRows(rows=[row], board=True, prefix=ticket.project.prefix,
                          tag_ids={ticket.pk: [tag.pk for tag in self.tags]}, tags={tag.pk: tag for tag in self.tags},
                          assignee_ids={ticket.pk: [user.pk for user in self.assignees]}, users=users)

    def save(self, *fields: str) -> None:
        """The change: `fields` of the ticket (set on it already) written in one UPDATE that also stamps
        updated_at and adds one to the version."""
        ticket = self.ticket
        ticket.version += 1
        ticket.save(update_fields=[*fields, "updated_at", "version"])

    def set_tags(self, tags: list[Tag]) -> None:
        self.tags = sorted(tags, key=lambda tag: (tag.sort_order, tag.pk))

    def set_assignees(self, users: list[User]) -> None:
        self.assignees = sorted(users, key=lambda user: user.pk)


def state_read(*, project_id: int, number: int) -> Read:
    """The state of ticket `number` of the project, as rows_together() takes it (the base view sends it in
    the round trip of the caller's membership, inside the write's transaction)."""
    return _by_number, {"project": project_id, "number": number}


def state_of(rows: list[tuple], *, project: Project | None = None) -> TicketState | None:
    """The TicketState of the rows of a state read, or None when there is no such ticket."""
    if not rows:
        return None
    row = rows[0]
    if row[-1] != row[TICKET_FIELDS.index("version")]:  # a write landed while this one waited: read again
        [row] = _deleted_too_by_id(ticket=row[0])
    ticket = Ticket.from_db(DEFAULT_DB_ALIAS, TICKET_FIELDS, row[:len(TICKET_FIELDS)])
    (status, creator, assignees, tags, blockers), counts = (
        map(orjson.loads, row[len(TICKET_FIELDS):len(TICKET_FIELDS) + 5]), row[len(TICKET_FIELDS) + 5:-1])
    [ticket.status] = [Status(**values) for values in status]
    if project is not None:
        ticket.project = project
    [ticket.created_by] = [User(**values) for values in creator]
    return TicketState(ticket=ticket, tags=[Tag(**values) for values in tags],
                       assignees=[User(**values) for values in assignees], creator=ticket.created_by,
                       reaction_count=counts[0], checklist_total=counts[1], checklist_done=counts[2],
                       blocker_versions=[(blocker["id"], blocker["version"]) for blocker in blockers])


def state_by_id(*, ticket_id: int) -> TicketState | None:
    """The state of the live ticket `ticket_id`, read now under its lock (None when there is none)."""
    [rows] = rows_together((_by_id, {"ticket": ticket_id}))
    return state_of(rows)


def lock_state(ticket: Ticket, *, deleted_too: bool = False) -> TicketState:
    """The state of `ticket`, read now under its lock, inside the current transaction, with the caller's project
    (404 when the ticket was deleted meanwhile, unless `deleted_too`)."""
    assert transaction.get_connection().in_atomic_block, "lock inside the writing transaction"
    [rows] = rows_together(((_deleted_too_by_id if deleted_too else _by_id), {"ticket": ticket.pk}))
    state = state_of(rows, project=ticket.project)
    if state is None:
        raise Http404("ticket not found")
    return state
