"""A ticket's life: created, updated, moved, archived and back, deleted and restored, assigned, sorted."""

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from accounts.models import User
from core.errors import RuleViolation
from core.events import Action, Event
from core.rows import UNCHANGED
from events.publish import Numbers, reserve_seq_then
from notifications import rules as notification_rules
from projects.models import Project, Status, StatusCategory, Tag
from tickets import broadcast, history, selectors
from tickets.models import Activity, ChecklistItem, Ticket, TicketType

from ..state import TicketState, lock_state
from . import positions


def take_number_seq_and_place(*, project: Project, status: Status) -> tuple[int, Numbers, positions.Place]:
    """Hand out the project's next ticket number and the seq of the frame that announces the ticket, and the
    ticket's place at the end of its column, in one round trip.

    The one UPDATE locks the project row until the surrounding transaction ends, so concurrent
    creations in one project queue here and numbers stay consecutive; the unique constraint on
    (project, number) backs this up. Creations queue for the rest of their transaction: what does not
    need the lock comes before this call. The column's end is read after the UPDATE, once the lock is
    granted, without locking it again.
    """
    assert transaction.get_connection().in_atomic_block, "call inside the creating transaction"
    end = positions.AtEnd(status)
    counters, [last_position] = Project.objects.advance_counters_then(
        project.pk, end.read(), last_ticket_number=1, board_seq=1)
    return counters["last_ticket_number"], Numbers.of(counters), end.place(last_position)


@contextmanager
def writing(ticket: Ticket | TicketState) -> Iterator[TicketState]:
    """The locked state a write works on: the one its caller holds, locked in the caller's transaction (the
    API's views lock the ticket as they load it), or else read now, under its lock, in a transaction of its
    own. Either way the write is atomic: a view rolls its transaction back when the write raises."""
    if isinstance(ticket, TicketState):
        yield ticket
        return
    with transaction.atomic():
        yield lock_state(ticket)


def writable(state: TicketState) -> None:
    """Archived tickets can be read, unarchived and deleted, nothing else."""
    if state.ticket.archived_at is not None:
        raise RuleViolation("ticket is archived: unarchive it first")


def _entering(ticket: Ticket, status: Status, *, sort_order: int) -> dict:
    """The field values that put the ticket in `status` at `sort_order`, with `done_at` (velocity) in step."""
    was_done = ticket.status_id is not None and ticket.status.category == StatusCategory.DONE
    is_done = status.category == StatusCategory.DONE
    return {
        "status": status,
        "sort_order": sort_order,
        "done_at": (ticket.done_at if was_done else timezone.now()) if is_done else None,
    }


@transaction.atomic
def create_ticket(
    *, project: Project, actor: User, title: str, description: str = "", type: str = TicketType.FEATURE,
    priority: str | None = None, status: Status | None = None, deadline: date | None = None,
    story_points: int | None = None, estimated_hours: Decimal | None = None,
    checklist: list[str] = (), tags: list[Tag] = (),
) -> Ticket:
    # Read before the project row is locked, which queues creations (the API's reads it with the membership).
    status = status or selectors.first_status(project=project.pk)
    number, numbers, place = take_number_seq_and_place(project=project, status=status)
    ticket = Ticket(
        project=project, number=number, title=title, description=description, type=type, priority=priority,
        deadline=deadline, story_points=story_points, estimated_hours=estimated_hours, created_by=actor,
    )
    for field, value in _entering(ticket, status, sort_order=place.sort_order).items():
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


def update_ticket(*, ticket: Ticket | TicketState, actor: User, title=UNCHANGED, description=UNCHANGED,
                  type=UNCHANGED, priority=UNCHANGED, deadline=UNCHANGED, story_points=UNCHANGED,
                  estimated_hours=UNCHANGED, tags=UNCHANGED) -> TicketState:
    """Change the given fields only (None clears a field); `tags` replaces the ticket's tags."""
    with writing(ticket) as state:
        writable(state)
        fields = {field: value for field, value in {
            "title": title, "description": description, "type": type, "priority": priority, "deadline": deadline,
            "story_points": story_points, "estimated_hours": estimated_hours}.items() if value is not UNCHANGED}
        before = history.snapshot(state.ticket, fields)
        for field, value in fields.items():
            setattr(state.ticket, field, value)
        diff = history.changes_between(before, history.snapshot(state.ticket, fields))
        if tags is not UNCHANGED and {tag.pk for tag in tags} != {tag.pk for tag in state.tags}:
            diff["tags"] = history.ids_change([tag.pk for tag in state.tags], [tag.pk for tag in tags])
            _replace_tags(state, tags)
        if not diff:
            return state
        state.save(*(field for field in fields if field in diff))
        history.record(ticket=state.ticket, actor=actor, action=Action.UPDATED, changes=diff)
        broadcast.announce_card(Event.TICKET_UPDATED, state=state, actor=actor)
        return state


def _replace_tags(state: TicketState, tags: list[Tag]) -> None:
    old, new = {tag.pk for tag in state.tags}, {tag.pk for tag in tags}
    links = Ticket.tags.through.objects.filter(ticket_id=state.ticket.pk)
    if old - new:
        links.filter(tag_id__in=old - new).delete()
    if new - old:
        state.ticket.tags.add(*(new - old))
    state.set_tags(tags)


def move_ticket(*, ticket: Ticket | TicketState, status: Status, actor: User, before_id: int | None = None,
                after_id: int | None = None) -> TicketState:
    """To the end of the column `status`, or right before the ticket `before_id` (after `after_id`) of it:
    a move within the column reorders it. Its frame says which ticket it now stands before (`before_id`,
    null at the end), so that viewers place it where it landed.

    Given a state (its caller locked the ticket), a move that must space the column out while another write
    holds one of its tickets raises positions.NoRoom, for its caller to run it again locking them first.
    Given a ticket, that is done here."""
    if isinstance(ticket, TicketState) or (before_id is None and after_id is None):
        with writing(ticket) as state:
            return _move(state, status, actor, before_id, after_id)
    # Tried first with the ticket and the project locked, as any move. If the column must be spaced out and
    # cannot be locked then, that attempt is rolled back (the savepoint lets go of its locks) and the next one
    # locks the column with the ticket, in id order, before the project.
    lock_first = None
    while True:
        try:
            with transaction.atomic():
                if lock_first is not None:
                    lock_first()
                return _move(lock_state(ticket), status, actor, before_id, after_id)
        except positions.NoRoom as no_room:
            lock_first = no_room.lock


def _move(state: TicketState, status: Status, actor: User, before_id: int | None, after_id: int | None
          ) -> TicketState:
    writable(state)
    ticket, from_status = state.ticket, state.ticket.status
    if from_status.pk == status.pk and before_id is None and after_id is None:
        return state
    where = (positions.AtEnd(status) if before_id is None and after_id is None
             else positions.Near.of(status=status, moving=ticket, before_id=before_id, after_id=after_id))
    numbers, place = _numbered_at(ticket.project_id, where)
    if place.already_there:
        transaction.set_rollback(True)  # no frame: the number taken for it goes back
        return state
    values = (_entering(ticket, status, sort_order=place.sort_order) if from_status.pk != status.pk
              else {"sort_order": place.sort_order})
    _change(state, actor, Action.MOVED, values)
    broadcast.announce_card(Event.TICKET_MOVED, state=state, actor=actor, numbers=numbers,
                            from_status=from_status.slug, to_status=status.slug, before_id=place.before_id)
    if from_status.pk != status.pk:
        notification_rules.ticket_moved(ticket=ticket, followers=followers(state), actor=actor)
    return state


def _change(state: TicketState, actor: User, action: Action, values: dict) -> None:
    """Write `values` to the locked ticket and record what changed."""
    before = history.snapshot(state.ticket, values)
    for field, value in values.items():
        setattr(state.ticket, field, value)
    state.save(*values)
    history.record(ticket=state.ticket, actor=actor, action=action,
                   changes=history.changes_between(before, history.snapshot(state.ticket, values)))


def followers(state: TicketState) -> set[int]:
    """Who hears of what happens to the ticket: its creator and assignees."""
    return {state.ticket.created_by_id, *(user.pk for user in state.assignees)}


def archive_ticket(*, ticket: Ticket | TicketState, actor: User) -> TicketState:
    with writing(ticket) as state:
        writable(state)
        _change(state, actor, Action.ARCHIVED, {"archived_at": timezone.now()})
        broadcast.announce_card(Event.TICKET_ARCHIVED, state=state, actor=actor)
        return state


def unarchive_ticket(*, ticket: Ticket | TicketState, actor: User) -> TicketState:
    """Back on the board at the end of its column; unarchiving an active ticket changes nothing."""
    with writing(ticket) as state:
        if state.ticket.archived_at is not None:
            _back_on_board(state, actor, Action.UNARCHIVED, Event.TICKET_UNARCHIVED, {"archived_at": None})
        return state


def delete_ticket(*, ticket: Ticket | TicketState, actor: User) -> TicketState:
    """Soft delete: the row stays (staff can restore it) and its number is never reused."""
    with writing(ticket) as state:
        _change(state, actor, Action.DELETED, {"deleted_at": timezone.now()})
        broadcast.announce_card(Event.TICKET_DELETED, state=state, actor=actor)
        return state


@transaction.atomic
def restore_ticket(*, ticket: Ticket, actor: User) -> None:
    """Undo a soft delete (staff, from the admin): the ticket reappears at the end of its column."""
    state = lock_state(ticket, deleted_too=True)
    if state.ticket.deleted_at is not None:
        _back_on_board(state, actor, Action.RESTORED, Event.TICKET_CREATED, {"deleted_at": None})


def _back_on_board(state: TicketState, actor: User, action: Action, event: Event, values: dict) -> None:
    """The ticket returns to the end of its column, which is read under the project's lock."""
    numbers, place = _numbered_at(state.ticket.project_id, positions.AtEnd(state.ticket.status))
    _change(state, actor, action, {**values, "sort_order": place.sort_order})
    broadcast.announce_card(event, state=state, actor=actor, numbers=numbers)


def _numbered_at(project_id: int, where: positions.AtEnd | positions.Near) -> tuple[Numbers, positions.Place]:
    """The frame's number, which takes the project's lock, and the place `where` the ticket lands, read under
    that lock in the same round trip."""
    numbers, [rows] = reserve_seq_then(project_id=project_id, reads=[where.read()])
    return numbers, where.place(rows)


def assign_user(*, ticket: Ticket | TicketState, user: User, actor: User) -> TicketState:
    """`user` must be a member: the caller checks (projects.selectors.member_user)."""
    with writing(ticket) as state:
        writable(state)
        if any(assignee.pk == user.pk for assignee in state.assignees):
            return state  # already assigned: no duplicate, no history
        state.ticket.assignees.add(user.pk)
        _assignees_changed(state, actor, Action.ASSIGNED, [*state.assignees, user])
        notification_rules.user_assigned(ticket=state.ticket, user_id=user.pk, actor=actor)
        return state


def unassign_user(*, ticket: Ticket | TicketState, user_id: int, actor: User) -> TicketState:
    """No membership check: a former member may still need to come off a ticket."""
    with writing(ticket) as state:
        writable(state)
        if all(assignee.pk != user_id for assignee in state.assignees):
            return state
        Ticket.assignees.through.objects.filter(ticket_id=state.ticket.pk, user_id=user_id).delete()
        _assignees_changed(state, actor, Action.UNASSIGNED, [a for a in state.assignees if a.pk != user_id])
        return state


def _assignees_changed(state: TicketState, actor: User, action: Action, assignees: list[User]) -> None:
    old_ids = [user.pk for user in state.assignees]
    state.set_assignees(assignees)
    state.save()
    history.record(ticket=state.ticket, actor=actor, action=action,
                   changes={"assignees": history.ids_change(old_ids, [user.pk for user in state.assignees])})
    broadcast.announce_card(Event.TICKET_UPDATED, state=state, actor=actor)


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
