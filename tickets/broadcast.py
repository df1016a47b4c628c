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

__all__ = ["board_group", "announce_tickets", "announce_created", "announce_column_sorted", "announce_comment",
           "announce_checklist", "announce_blockers", "announce_attachments", "announce_tag"]


def announce_tickets(event: Event, *, project: Project, tickets: Sequence[Ticket], actor: User, **extra) -> None:
    """One frame per ticket of the project, each in its board shape as of now."""
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


def announce_comment(event: Event, *, ticket: Ticket, comment: Comment, actor: User) -> None:
    announce(project_id=ticket.project_id, actor=actor,
             frames=[{"event": event, "ticket_id": ticket.pk, "comment": CommentOutput(comment).data}])


def announce_checklist(*, ticket: Ticket, change: str, item: ChecklistItem | None, actor: User) -> None:
    """`item` as the change leaves it (as it was, for a deletion: call before deleting; None for a reorder),
    and the checklist's order after the change."""
    items = ticket.checklist_items.exclude(pk=item.pk) if change == "deleted" else ticket.checklist_items
    order = list(items.order_by("sort_order", "id").values_list("pk", flat=True))
    announce(project_id=ticket.project_id, actor=actor, frames=[{
        "event": Event.CHECKLIST_CHANGED, "ticket_id": ticket.pk, "change": change,
        "item": None if item is None else ChecklistItemOutput(item).data, "item_ids": order}])


def announce_blockers(*, ticket: Ticket, blocker_ids: set[int], actor: User) -> None:
    announce(project_id=ticket.project_id, actor=actor, frames=[{
        "event": Event.BLOCKERS_CHANGED, "ticket_id": ticket.pk, "blocker_ids": sorted(blocker_ids)}])


def announce_attachments(event: Event, *, ticket: Ticket, attachments: Sequence[Attachment], actor: User) -> None:
    announce(project_id=ticket.project_id, actor=actor, frames=[
        {"event": event, "ticket_id": ticket.pk, "attachment": AttachmentOutput(attachment).data}
        for attachment in attachments])


def announce_tag(event: Event, *, tag: Tag, actor: User) -> None:
    """The tag as the API shows it; for a deletion, as it was (build it before deleting)."""
    announce(project_id=tag.project_id, actor=actor, frames=[{"event": event, "tag": TagOutput(tag).data}])
