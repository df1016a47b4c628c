"""A project's ticket events: built by the writing service inside its transaction, kept and published
through events.publish.announce (numbered there, sent once the write commits).

Ticket frames carry the ticket in the board's own shape as the write leaves it; the others carry
their object in the shape the API answers with, and `ticket_id`.
"""

from collections.abc import Sequence

from accounts.models import User
from core.events import Event
from events.publish import Numbers, announce, board_group
from projects.models import Project, Tag
from projects.serializers import TagOutput

from . import selectors
from .models import Attachment, ChecklistItem, Comment, Ticket
from .serializers import AttachmentOutput, ChecklistItemOutput, CommentOutput, ticket_shapes
from .state import TicketState

__all__ = ["board_group", "announce_card", "card_frame", "announce_tickets", "announce_created", "announce_column_sorted", "comment_frame",
           "checklist_frame", "blockers_frame", "attachment_frames", "announce_tag"]


def card_frame(event: Event, *, state: TicketState, **extra) -> dict:
    """The frame of a change to the ticket's card, its shape built from the write's state (nothing read)."""
    [shape] = ticket_shapes(state.board_rows())
    return {"event": event, "ticket": shape, **extra}


def announce_card(event: Event, *, state: TicketState, actor: User, numbers: Numbers | None = None,
                  also: Sequence[dict] = (), **extra) -> None:
    """The card's frame, then the frames `also` (of the same write: a comment's own), numbered together."""
    announce(project_id=state.ticket.project_id, frames=[card_frame(event, state=state, **extra), *also],
             actor=actor, numbers=numbers)


def announce_tickets(event: Event, *, project: Project, tickets: Sequence[Ticket], actor: User, **extra) -> None:
    """One frame per ticket of the project, each in its board shape as of now, read again (a write to many
    tickets, which holds no state of each)."""
    if not tickets:
        return
    shapes = {shape["id"]: shape for shape in ticket_shapes(selectors.board_tickets_by_id(
        project=project, ticket_ids=[ticket.pk for ticket in tickets], users=[actor]))}
    frames = [{"event": event, "ticket": shapes[ticket.pk], **extra} for ticket in tickets]
    announce(project_id=project.pk, frames=frames, actor=actor)


def announce_created(*, ticket: Ticket, tags: Sequence[Tag], checklist_total: int, actor: User,
                     numbers: Numbers) -> None:
    """The frame of a ticket just created, shaped from what its creation wrote (nothing read back while
    the project row is locked), numbered by `numbers` (taken with the ticket's number)."""
    [shape] = ticket_shapes(selectors.new_ticket_rows(ticket=ticket, tags=tags, checklist_total=checklist_total))
    announce(project_id=ticket.project_id, frames=[{"event": Event.TICKET_CREATED, "ticket": shape}], actor=actor,
             numbers=numbers)


def announce_column_sorted(*, project: Project, status_slug: str, ticket_ids: list[int], actor: User) -> None:
    announce(project_id=project.pk, actor=actor,
             frames=[{"event": Event.COLUMN_SORTED, "status": status_slug, "ticket_ids": ticket_ids}])


def comment_frame(event: Event, *, comment: Comment) -> dict:
    return {"event": event, "ticket_id": comment.ticket_id, "comment": CommentOutput(comment).data}


def checklist_frame(*, ticket: Ticket, change: str, item: ChecklistItem | None) -> dict:
    """`item` as the change leaves it (as it was, for a deletion: call before deleting; None for a reorder),
    and the checklist's order after the change."""
    items = ticket.checklist_items.exclude(pk=item.pk) if change == "deleted" else ticket.checklist_items
    order = list(items.order_by("sort_order", "id").values_list("pk", flat=True))
    return {"event": Event.CHECKLIST_CHANGED, "ticket_id": ticket.pk, "change": change,
            "item": None if item is None else ChecklistItemOutput(item).data, "item_ids": order}


def blockers_frame(*, ticket: Ticket, blocker_ids: set[int]) -> dict:
    return {"event": Event.BLOCKERS_CHANGED, "ticket_id": ticket.pk, "blocker_ids": sorted(blocker_ids)}


def attachment_frames(event: Event, *, ticket: Ticket, attachments: Sequence[Attachment]) -> list[dict]:
    return [{"event": event, "ticket_id": ticket.pk, "attachment": AttachmentOutput(attachment).data}
            for attachment in attachments]


def announce_tag(event: Event, *, tag: Tag, actor: User) -> None:
    """The tag as the API shows it; for a deletion, as it was (build it before deleting)."""
    announce(project_id=tag.project_id, actor=actor, frames=[{"event": event, "tag": TagOutput(tag).data}])
