"""Real-time board frames, sent to the project's channel group once the write has committed.

Services call `ticket_event` / `column_sorted` inside their transaction; the frame is built
and sent only after commit (and never for a rolled-back write), from the board's own
selector and serializer so it matches GET /board exactly.
"""

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction
from django.db.models import F

from accounts.models import User
from projects.models import Project

from . import selectors
from .models import Ticket
from .serializers import BoardTicketOutput


def board_group(project_id: int) -> str:
    return f"project-{project_id}-board"


def ticket_event(event: str, *, ticket: Ticket, actor: User, **extra) -> None:
    project_id, ticket_id, actor_ref = ticket.project_id, ticket.pk, _actor(actor)
    # A function, not a partial: Django names the callback (__qualname__) when logging its failure.
    transaction.on_commit(lambda: _send_ticket_frame(event, project_id, ticket_id, actor_ref, extra), robust=True)


def column_sorted(*, project: Project, status_slug: str, ticket_ids: list[int], actor: User) -> None:
    frame = {"event": "column.sorted", "status": status_slug, "ticket_ids": ticket_ids}
    project_id, actor_ref = project.pk, _actor(actor)
    transaction.on_commit(lambda: _send(project_id, frame, actor_ref), robust=True)


def _actor(user: User) -> dict:
    return {"id": user.pk, "name": user.display_name}


def _send_ticket_frame(event: str, project_id: int, ticket_id: int, actor: dict, extra: dict) -> None:
    ticket = BoardTicketOutput(selectors.board_ticket(ticket_id=ticket_id)).data
    _send(project_id, {"event": event, "ticket": ticket, **extra}, actor)


def _send(project_id: int, frame: dict, actor: dict) -> None:
    frame = {**frame, "project_id": project_id, "actor": actor, "seq": _next_seq(project_id)}
    async_to_sync(get_channel_layer().group_send)(board_group(project_id), {"type": "board.frame", "frame": frame})


@transaction.atomic
def _next_seq(project_id: int) -> int:
    # The UPDATE holds the row lock until commit, so each frame reads back its own number.
    Project.objects.filter(pk=project_id).update(board_seq=F("board_seq") + 1)
    return Project.objects.values_list("board_seq", flat=True).get(pk=project_id)
