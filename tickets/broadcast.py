"""Real-time board frames: built by the writing service inside its transaction, published once it commits.

A frame carries the ticket in the board's own shape as the write leaves it, and a `seq` taken in
the same transaction: numbers follow commit order without gaps, and a rolled-back write takes none
and sends nothing. Nothing is read again after commit.
"""

from collections.abc import Sequence

from django.db import transaction
from django.db.models import F

from accounts.models import User
from core import live
from core.events import Event
from projects.models import Project

from . import selectors
from .models import Ticket
from .serializers import ticket_shapes


def board_group(project_id: int) -> str:
    return f"project-{project_id}-board"


def announce_tickets(event: Event, *, tickets: Sequence[Ticket], actor: User, **extra) -> None:
    """One frame per ticket (all of one project), each in its board shape as of now."""
    if not tickets:
        return
    shapes = {shape["id"]: shape for shape in ticket_shapes(
        selectors.board_tickets_by_id(ticket_ids=[ticket.pk for ticket in tickets]))}
    frames = [{"event": event, "ticket": shapes[ticket.pk], **extra} for ticket in tickets]
    announce(project_id=tickets[0].project_id, frames=frames, actor=actor)


def announce_column_sorted(*, project: Project, status_slug: str, ticket_ids: list[int], actor: User) -> None:
    announce(project_id=project.pk, actor=actor,
             frames=[{"event": Event.COLUMN_SORTED, "status": status_slug, "ticket_ids": ticket_ids}])


def announce(*, project_id: int, frames: list[dict], actor: User) -> None:
    """Number the frames and publish them, in one message, once the current transaction commits."""
    first = reserve_seq(project_id=project_id, count=len(frames))
    actor_ref = {"id": actor.pk, "name": actor.display_name}
    frames = [{**frame, "project_id": project_id, "actor": actor_ref, "seq": first + offset}
              for offset, frame in enumerate(frames)]
    live.send_after_commit([(board_group(project_id), {"type": "board.frames", "frames": frames})])


def reserve_seq(*, project_id: int, count: int) -> int:
    """The first of `count` consecutive frame numbers of the project.

    The UPDATE holds the project row until the write commits, so concurrent writers number their
    frames in the order they commit; it is the last lock a write takes, after its ticket rows.
    """
    assert transaction.get_connection().in_atomic_block, "call inside the writing transaction"
    Project.objects.filter(pk=project_id).update(board_seq=F("board_seq") + count)
    return Project.objects.values_list("board_seq", flat=True).get(pk=project_id) - count + 1
