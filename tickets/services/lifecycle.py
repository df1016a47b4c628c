"""A ticket's life: created, updated, moved, archived and back, deleted and restored, assigned, sorted."""

from collections.abc import Callable
from datetime import date
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from accounts.models import User
from core.errors import RuleViolation
from core.events import Action, Event
from core.queries import PreparedLookup
from core.rows import UNCHANGED
from events.publish import Numbers
from notifications import rules as notification_rules
from projects.models import Project, Status, StatusCategory, Tag
from tickets import broadcast, history
from tickets.models import Activity, ChecklistItem, Ticket, TicketType

from . import positions
from .locking import locked_ticket, writable_ticket


def take_number_and_seq(*, project: Project) -> tuple[int, Numbers]:
    """Hand out the project's next ticket number and the seq of the frame that announces the ticket.

    The one UPDATE locks the project row until the surrounding transaction ends, so concurrent
    creations in one project queue here and numbers stay consecutive; the unique constraint on
    (project, number) backs this up. Creations queue for the rest of their transaction: what does not
    need the lock comes before this call.
    """
    assert transaction.get_connection().in_atomic_block, "call inside the creating transaction"
    counters = Project.objects.advance_counters(project.pk, last_ticket_number=1, board_seq=1)
    return counters["last_ticket_number"], Numbers.of(counters)


def end_of_locked_column(*, project_id: int, status: Status) -> int:
    """The end of a column, read under the project's row lock: two tickets entering one column at once
    queue here and never share a position. The project comes after any ticket the write has locked."""
    Project.objects.lock(project_id)
    return positions.end_of_column(status).sort_order


# Compiled once: every creation without a status reads it.
_first_status = PreparedLookup(Status, lambda statuses, project: statuses.filter(project_id=project),
                               first_by=("sort_order", "id"))


def first_status(project: Project) -> Status:
    return _first_status(project=project.pk)


def _entering(ticket: Ticket, status: Status, *, sort_order: int) -> dict:
    """The field values that put the ticket in `status` at `sort_order`, with `done_at` (velocity) in step."""
    was_done = ticket.status_id is not None and ticket.status.category == StatusCategory.DONE
    is_done = status.category == StatusCategory.DONE
    return {
        "status": status,
        "sort_order": sort_order,
        "done_at": (ticket.done_at if was_done else timezone.now()) if is_done else None,
    }


def _apply(ticket: Ticket, actor: User, action: Action, event: Event, values: dict, **frame) -> Ticket:
    """Write `values` to the locked ticket, record what changed and announce it to the board."""
    before = history.snapshot(ticket, values)
    for field, value in values.items():
        setattr(ticket, field, value)
    ticket.save(update_fields=[*values, "updated_at"])
    history.record(ticket=ticket, actor=actor, action=action,
                   changes=history.changes_between(before, history.snapshot(ticket, values)))
    broadcast.announce_tickets(event, project=ticket.project, tickets=[ticket], actor=actor, **frame)
    return ticket


@transaction.atomic
def create_ticket(
    *, project: Project, actor: User, title: str, description: str = "", type: str = TicketType.FEATURE,
    priority: str | None = None, status: Status | None = None, deadline: date | None = None,
    story_points: int | None = None, estimated_hours: Decimal | None = None,
    checklist: list[str] = (), tags: list[Tag] = (),
) -> Ticket:
    status = status or first_status(project)  # read before the project row is locked: it queues creations
    number, numbers = take_number_and_seq(project=project)
    ticket = Ticket(
        project=project, number=number, title=title, description=description, type=type, priority=priority,
        deadline=deadline, story_points=story_points, estimated_hours=estimated_hours, created_by=actor,
    )
    # The number's UPDATE holds the project row already: the column's end is read without locking it again.
    end_of_column = positions.end_of_column(status).sort_order
    for field, value in _entering(ticket, status, sort_order=end_of_column).items():
        setattr(ticket, field, value)
    ticket.save()
    if tags:
        ticket.tags.add(*tags)  # a new ticket has none to compare with, as set() would
    ChecklistItem.objects.bulk_create(
        ChecklistItem(ticket=ticket, text=text, sort_order=index) for index, text in enumerate(checklist)
    )
    changes = {field: {"old": None, "new": value} for field, value in history.snapshot(ticket).items()
               if value not in (None, "")}
    if tags:
        changes["tags"] = history.ids_change([], [tag.pk for tag in tags])
    if checklist:
        changes["checklist"] = {"old": [], "new": list(checklist)}
    history.record(ticket=ticket, actor=actor, action=Action.CREATED, changes=changes)
    broadcast.announce_created(ticket=ticket, tags=tags, checklist_total=len(checklist), actor=actor,
                               numbers=numbers)
    return ticket


@transaction.atomic
def update_ticket(
    *, ticket: Ticket, actor: User, title=UNCHANGED, description=UNCHANGED, type=UNCHANGED, priority=UNCHANGED,
    deadline=UNCHANGED, story_points=UNCHANGED, estimated_hours=UNCHANGED, tags=UNCHANGED,
    precondition: Callable[[Ticket], None] | None = None,
) -> Ticket:
    """Change the given fields only (None clears a field); `tags` replaces the ticket's tags. `precondition`
    is called with the locked ticket before anything is written, and refuses the write by raising."""
    ticket = writable_ticket(ticket, precondition)
    fields = {field: value for field, value in {
        "title": title, "description": description, "type": type, "priority": priority, "deadline": deadline,
        "story_points": story_points, "estimated_hours": estimated_hours}.items() if value is not UNCHANGED}
    before = history.snapshot(ticket, fields)
    for field, value in fields.items():
        setattr(ticket, field, value)
    diff = history.changes_between(before, history.snapshot(ticket, fields))
    if tags is not UNCHANGED:
        old_ids = set(ticket.tags.values_list("pk", flat=True))
        new_ids = {tag.pk for tag in tags}
        if old_ids != new_ids:
            ticket.tags.set(tags)
            diff["tags"] = history.ids_change(old_ids, new_ids)
    if not diff:
        return ticket
    ticket.save()
    history.record(ticket=ticket, actor=actor, action=Action.UPDATED, changes=diff)
    broadcast.announce_tickets(Event.TICKET_UPDATED, project=ticket.project, tickets=[ticket], actor=actor)
    return ticket


@transaction.atomic
def move_ticket(*, ticket: Ticket, status: Status, actor: User, before_id: int | None = None,
                after_id: int | None = None, precondition: Callable[[Ticket], None] | None = None) -> Ticket:
    """To the end of the column `status`, or right before the ticket `before_id` (after `after_id`) of it:
    a move within the column reorders it. Its frame says which ticket it now stands before (`before_id`,
    null at the end), so that viewers place it where it landed. `precondition`: as for update_ticket.
    Called before the ticket is locked (a move that spaces the column out locks it with its column)."""
    if before_id is None and after_id is None:
        return _move(ticket, status, actor, None, None, precondition, column_locked=False)
    # Tried first with the ticket and the project locked, as any move. If the column must be spaced out, that
    # attempt is rolled back (the savepoint lets go of its locks) and the next one locks the column with the
    # ticket, in id order, before the project: its other tickets are never locked while the project is held.
    column_locked = False
    while True:
        try:
            with transaction.atomic():
                return _move(ticket, status, actor, before_id, after_id, precondition, column_locked=column_locked)
        except positions.NoRoom:
            column_locked = True


def _move(ticket: Ticket, status: Status, actor: User, before_id: int | None, after_id: int | None,
          precondition: Callable[[Ticket], None] | None, *, column_locked: bool) -> Ticket:
    locked = positions.lock_column(status, moving=ticket) if column_locked else None
    ticket = writable_ticket(ticket, precondition)
    from_status = ticket.status
    relative = before_id is not None or after_id is not None
    if from_status == status and not relative:
        return ticket
    Project.objects.lock(ticket.project_id)
    place = positions.place_near(status=status, moving=ticket, before_id=before_id, after_id=after_id, locked=locked)
    if from_status == status and place.before_id == positions.successor(ticket):
        return ticket  # already there
    ticket = _apply(ticket, actor, Action.MOVED, Event.TICKET_MOVED,
                    _entering(ticket, status, sort_order=place.sort_order) if from_status != status
                    else {"sort_order": place.sort_order},
                    from_status=from_status.slug, to_status=status.slug, before_id=place.before_id)
    if from_status != status:
        notification_rules.ticket_moved(ticket=ticket, actor=actor)
    return ticket


@transaction.atomic
def archive_ticket(*, ticket: Ticket, actor: User) -> Ticket:
    ticket = writable_ticket(ticket)
    return _apply(ticket, actor, Action.ARCHIVED, Event.TICKET_ARCHIVED, {"archived_at": timezone.now()})


@transaction.atomic
def unarchive_ticket(*, ticket: Ticket, actor: User) -> Ticket:
    """Back on the board at the end of its column; unarchiving an active ticket changes nothing."""
    ticket = locked_ticket(ticket)
    if ticket.archived_at is None:
        return ticket
    end_of_column = end_of_locked_column(project_id=ticket.project_id, status=ticket.status)
    return _apply(ticket, actor, Action.UNARCHIVED, Event.TICKET_UNARCHIVED,
                  {"archived_at": None, "sort_order": end_of_column})


@transaction.atomic
def delete_ticket(*, ticket: Ticket, actor: User) -> None:
    """Soft delete: the row stays (staff can restore it) and its number is never reused."""
    _apply(locked_ticket(ticket), actor, Action.DELETED, Event.TICKET_DELETED, {"deleted_at": timezone.now()})


@transaction.atomic
def restore_ticket(*, ticket: Ticket, actor: User) -> None:
    """Undo a soft delete (staff, from the admin): the ticket reappears at the end of its column."""
    ticket = locked_ticket(ticket)
    if ticket.deleted_at is not None:
        end_of_column = end_of_locked_column(project_id=ticket.project_id, status=ticket.status)
        _apply(ticket, actor, Action.RESTORED, Event.TICKET_CREATED, {"deleted_at": None, "sort_order": end_of_column})


def _set_assignee(ticket: Ticket, actor: User, user_id: int, *, assign: bool) -> Ticket:
    ticket = writable_ticket(ticket)
    old_ids = set(ticket.assignees.values_list("pk", flat=True))
    if (user_id in old_ids) == assign:
        return ticket  # already as asked: no duplicate, no history
    (ticket.assignees.add if assign else ticket.assignees.remove)(user_id)
    ticket.save(update_fields=["updated_at"])
    new_ids = old_ids | {user_id} if assign else old_ids - {user_id}
    history.record(ticket=ticket, actor=actor, action=Action.ASSIGNED if assign else Action.UNASSIGNED,
                   changes={"assignees": history.ids_change(old_ids, new_ids)})
    broadcast.announce_tickets(Event.TICKET_UPDATED, project=ticket.project, tickets=[ticket], actor=actor)
    if assign:
        notification_rules.user_assigned(ticket=ticket, user_id=user_id, actor=actor)
    return ticket


@transaction.atomic
def assign_user(*, ticket: Ticket, user: User, actor: User) -> Ticket:
    """`user` must be a member: the caller checks (projects.selectors.member_user)."""
    return _set_assignee(ticket, actor, user.pk, assign=True)


@transaction.atomic
def unassign_user(*, ticket: Ticket, user_id: int, actor: User) -> Ticket:
    """No membership check: a former member may still need to come off a ticket."""
    return _set_assignee(ticket, actor, user_id, assign=False)


@transaction.atomic
def sort_column(*, project: Project, status: Status, ticket_ids: list[int], actor: User) -> None:
    """Reorder a whole column: `ticket_ids` must be exactly its current tickets, which take positions GAP
    apart in that order."""
    # Locked in id order, so two sorts of one column queue instead of deadlocking; then the project, as every
    # placement does after its tickets.
    column = {ticket.pk: ticket for ticket in Ticket.objects.select_for_update(no_key=True).active()
              .filter(project=project, status=status).order_by("pk")}
    Project.objects.lock(project.pk)
    if len(ticket_ids) != len(set(ticket_ids)) or set(ticket_ids) != set(column):
        raise RuleViolation("ticket_ids: must list exactly the tickets of the column, each once",
                            field="ticket_ids")
    entries = []
    for index, ticket_id in enumerate(ticket_ids):
        ticket, position = column[ticket_id], index * positions.GAP
        if ticket.sort_order != position:
            entries.append(history.entry(ticket=ticket, actor=actor, action=Action.SORTED,
                                         changes={"sort_order": {"old": ticket.sort_order, "new": position}}))
            ticket.sort_order = position
    if not entries:
        return
    Ticket.objects.bulk_update([entry.ticket for entry in entries], ["sort_order"])
    Activity.objects.bulk_create(entries)
    broadcast.announce_column_sorted(project=project, status_slug=status.slug, ticket_ids=ticket_ids, actor=actor)
