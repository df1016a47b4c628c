"""A ticket's content: comments, checklist items and blockers. Each write locks its ticket, which must
not be archived, counts as an update of the ticket and records it; the board hears of it only when
the card changes (comment and checklist counts)."""

from collections import defaultdict
from collections.abc import Callable

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from accounts.models import User
from core.errors import RuleViolation
from core.events import Action, Event
from events.publish import announce
from notifications import rules as notification_rules
from projects.models import Project
from tickets import broadcast, history, selectors
from tickets.models import Blocker, ChecklistItem, Comment, Ticket

from ..state import TicketState, lock_state
from .lifecycle import followers, writable, writing


def content_changed(state: TicketState, actor: User, action: Action, changes: dict, *, on_board: bool,
                    frames: list[dict] = ()) -> None:
    """A write to the content of the locked ticket: the ticket counts as updated and records it, and the write's
    `frames` are announced, after the card's when the card changed (`on_board`: its counts)."""
    state.save()
    history.record(ticket=state.ticket, actor=actor, action=action, changes=changes)
    if on_board:
        broadcast.announce_card(Event.TICKET_UPDATED, state=state, actor=actor, also=frames)
    else:
        announce(project_id=state.ticket.project_id, frames=list(frames), actor=actor)


def _change_part(state: TicketState, part: Comment | ChecklistItem, actor: User, action: Action, key: str, *,
                 on_board: bool, frame, **values) -> None:
    """Write `values` to a comment or checklist item of the locked ticket; history shows them, old and new.
    `frame(part)` builds the write's own frame from the part as it is then."""
    before = {"id": part.pk, **{field: getattr(part, field) for field in values}}
    for field, value in values.items():
        setattr(part, field, value)
    part.save(update_fields=[*values, *(["updated_at"] if isinstance(part, Comment) else [])])
    content_changed(state, actor, action, {key: {"old": before, "new": {"id": part.pk, **values}}},
                    on_board=on_board, frames=[frame(part)])


def _comment_state(comment: Comment) -> dict:
    return {"id": comment.pk, "message": comment.message}


def _writable_part(part: Comment | ChecklistItem, read_again: Callable[[int], Comment | ChecklistItem]
                   ) -> tuple[TicketState, Comment | ChecklistItem]:
    """Its ticket locked and writable, and `part` read again under that lock (deleted meanwhile: 404)."""
    state = lock_state(part.ticket)
    writable(state)
    return state, read_again(part.pk)


def writable_comment(comment: Comment) -> tuple[TicketState, Comment]:
    return _writable_part(comment, lambda pk: selectors.live_comment(comment_id=pk))


def add_comment(*, ticket: Ticket | TicketState, author: User, message: str) -> Comment:
    with writing(ticket) as state:
        writable(state)
        comment = Comment.objects.create(ticket=state.ticket, author=author, message=message)
        state.reaction_count += 1
        content_changed(state, author, Action.COMMENTED, {"comment": {"old": None, "new": _comment_state(comment)}},
                        on_board=True, frames=[broadcast.comment_frame(Event.COMMENT_CREATED, comment=comment)])
        notification_rules.comment_added(ticket=state.ticket, followers=followers(state), message=comment.message,
                                         actor=author)
        return comment


@transaction.atomic
def edit_comment(*, comment: Comment, message: str, actor: User) -> Comment:
    state, comment = writable_comment(comment)
    if comment.message != message:
        notification_rules.comment_edited(ticket=state.ticket, old_message=comment.message, new_message=message,
                                          actor=actor)
        _change_part(state, comment, actor, Action.COMMENT_EDITED, "comment", on_board=False, message=message,
                     frame=lambda part: broadcast.comment_frame(Event.COMMENT_UPDATED, comment=part))
    return comment


@transaction.atomic
def delete_comment(*, comment: Comment, actor: User) -> None:
    """Soft delete: the row stays, but the ticket no longer shows or counts it."""
    state, comment = writable_comment(comment)
    comment.deleted_at = timezone.now()
    comment.save(update_fields=["deleted_at", "updated_at"])
    state.reaction_count -= 1
    content_changed(state, actor, Action.COMMENT_DELETED, {"comment": {"old": _comment_state(comment), "new": None}},
                    on_board=True, frames=[broadcast.comment_frame(Event.COMMENT_DELETED, comment=comment)])


def _item_state(item: ChecklistItem) -> dict:
    return {"id": item.pk, "text": item.text, "done": item.done}


def _writable_item(item: ChecklistItem) -> tuple[TicketState, ChecklistItem]:
    return _writable_part(item, lambda pk: selectors.checklist_item(item_id=pk))


def add_checklist_item(*, ticket: Ticket | TicketState, text: str, actor: User) -> ChecklistItem:
    """Appended at the end of the ticket's checklist, not done."""
    with writing(ticket) as state:
        writable(state)
        last = state.ticket.checklist_items.aggregate(last=Max("sort_order"))["last"]
        item = ChecklistItem.objects.create(ticket=state.ticket, text=text, sort_order=0 if last is None else last + 1)
        state.checklist_total += 1
        content_changed(state, actor, Action.CHECKLIST_ITEM_ADDED,
                        {"checklist_item": {"old": None, "new": _item_state(item)}}, on_board=True,
                        frames=[broadcast.checklist_frame(ticket=state.ticket, change="added", item=item)])
        return item


@transaction.atomic
def toggle_checklist_item(*, item: ChecklistItem, actor: User) -> ChecklistItem:
    # Flipped under the ticket's lock, so two toggles at once always end where they started.
    state, item = _writable_item(item)
    state.checklist_done += -1 if item.done else 1
    _change_part(state, item, actor, Action.CHECKLIST_ITEM_TOGGLED, "checklist_item", on_board=True,
                 done=not item.done,
                 frame=lambda part: broadcast.checklist_frame(ticket=state.ticket, change="toggled", item=part))
    return item


@transaction.atomic
def rename_checklist_item(*, item: ChecklistItem, text: str, actor: User) -> ChecklistItem:
    state, item = _writable_item(item)
    if item.text != text:
        _change_part(state, item, actor, Action.CHECKLIST_ITEM_UPDATED, "checklist_item", on_board=False, text=text,
                     frame=lambda part: broadcast.checklist_frame(ticket=state.ticket, change="renamed", item=part))
    return item


@transaction.atomic
def delete_checklist_item(*, item: ChecklistItem, actor: User) -> None:
    state, item = _writable_item(item)
    before = _item_state(item)
    frame = broadcast.checklist_frame(ticket=state.ticket, change="deleted", item=item)  # before: delete() drops its id
    item.delete()
    state.checklist_total -= 1
    state.checklist_done -= int(item.done)
    content_changed(state, actor, Action.CHECKLIST_ITEM_DELETED, {"checklist_item": {"old": before, "new": None}},
                    on_board=True, frames=[frame])


def sort_checklist(*, ticket: Ticket | TicketState, item_ids: list[int], actor: User) -> None:
    """Reorder a ticket's checklist: `item_ids` must be exactly its items."""
    with writing(ticket) as state:
        writable(state)
        items = {item.pk: item for item in state.ticket.checklist_items.order_by("sort_order", "id")}
        if len(item_ids) != len(set(item_ids)) or set(item_ids) != set(items):
            raise RuleViolation("item_ids: must list exactly the items of the ticket, each once", field="item_ids")
        old_order = list(items)
        if item_ids == old_order:
            return
        for position, item_id in enumerate(item_ids):
            items[item_id].sort_order = position
        ChecklistItem.objects.bulk_update(items.values(), ["sort_order"])
        content_changed(state, actor, Action.CHECKLIST_SORTED,
                        {"checklist_order": {"old": old_order, "new": item_ids}}, on_board=False,
                        frames=[broadcast.checklist_frame(ticket=state.ticket, change="sorted", item=None)])


def _blocks(*, project_id: int, start: int, goal: int) -> bool:
    """Whether ticket `start` blocks ticket `goal`, directly or through others.

    One query loads the links between the project's live tickets; the walk visits each ticket once.
    """
    blocked_by = defaultdict(list)
    for blocker_id, ticket_id in Blocker.objects.filter(
            ticket__project_id=project_id, ticket__deleted_at__isnull=True, blocker__deleted_at__isnull=True,
    ).values_list("blocker_id", "ticket_id"):
        blocked_by[blocker_id].append(ticket_id)
    seen, pending = {start}, [start]
    while pending:
        for ticket_id in blocked_by[pending.pop()]:
            if ticket_id == goal:
                return True
            if ticket_id not in seen:
                seen.add(ticket_id)
                pending.append(ticket_id)
    return False


def add_blocker(*, ticket: Ticket | TicketState, blocker: Ticket, actor: User) -> None:
    """`blocker` (a live ticket of the same project: the caller checks) comes to block `ticket`."""
    with writing(ticket) as state:
        ticket = state.ticket
        if blocker.pk == ticket.pk:
            raise RuleViolation("blocker_ticket_id: a ticket cannot block itself", field="blocker_ticket_id")
        writable(state)
        # One link is added per project at a time: two links added at once could close a cycle that neither
        # transaction sees.
        Project.objects.lock(ticket.project_id)
        old_ids = set(ticket.blocked_by_links.values_list("blocker_id", flat=True))
        if blocker.pk in old_ids:
            return
        if _blocks(project_id=ticket.project_id, start=ticket.pk, goal=blocker.pk):
            raise RuleViolation(f"blocker_ticket_id: {ticket.prefix_ref} already blocks {blocker.prefix_ref}, "
                                "directly or through other tickets", field="blocker_ticket_id")
        Blocker.objects.create(ticket=ticket, blocker=blocker)
        content_changed(state, actor, Action.BLOCKER_ADDED,
                        {"blockers": history.ids_change(old_ids, old_ids | {blocker.pk})}, on_board=False,
                        frames=[broadcast.blockers_frame(ticket=ticket, blocker_ids=old_ids | {blocker.pk})])


def remove_blocker(*, ticket: Ticket | TicketState, blocker_id: int, actor: User) -> None:
    """Removing a ticket that does not block this one changes nothing."""
    with writing(ticket) as state:
        writable(state)
        ticket = state.ticket
        old_ids = set(ticket.blocked_by_links.values_list("blocker_id", flat=True))
        if blocker_id not in old_ids:
            return
        Blocker.objects.filter(ticket=ticket, blocker_id=blocker_id).delete()
        content_changed(state, actor, Action.BLOCKER_REMOVED,
                        {"blockers": history.ids_change(old_ids, old_ids - {blocker_id})}, on_board=False,
                        frames=[broadcast.blockers_frame(ticket=ticket, blocker_ids=old_ids - {blocker_id})])
