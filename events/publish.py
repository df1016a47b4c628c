"""The one way a project's events leave a write: numbered and kept inside its transaction, sent after commit.

A frame carries a `seq` taken in the same transaction: numbers follow commit order without gaps, a
rolled-back write takes none, keeps no row and sends nothing. Each frame is kept as a ProjectEvent
row exactly as it is sent, so a viewer that missed frames reads them back (events/replay.py, the
feed). Nothing is read again after commit.
"""

from django.db import transaction

from accounts.models import User
from core import live
from projects.models import Project

from .models import ProjectEvent


def board_group(project_id: int) -> str:
    return f"project-{project_id}-board"


def announce(*, project_id: int, frames: list[dict], actor: User, first_seq: int | None = None) -> None:
    """Number the frames, keep them, and publish them in one message once the current transaction commits.

    `first_seq`: the frames' numbers were already taken in this transaction, with another of the project's
    counters in the same UPDATE (a ticket's creation takes its number and its frame's seq together).
    """
    if not frames:
        return
    first = reserve_seq(project_id=project_id, count=len(frames)) if first_seq is None else first_seq
    actor_ref = {"id": actor.pk, "name": actor.display_name}
    frames = [{**frame, "project_id": project_id, "actor": actor_ref, "seq": first + offset}
              for offset, frame in enumerate(frames)]
    ProjectEvent.objects.bulk_create(
        ProjectEvent(project_id=project_id, seq=frame["seq"], event=frame["event"], actor=actor, payload=frame)
        for frame in frames)
    live.send_after_commit([(board_group(project_id), {"type": "board.frames", "frames": frames})])


def reserve_seq(*, project_id: int, count: int) -> int:
    """The first of `count` consecutive frame numbers of the project.

    The UPDATE holds the project row until the write commits, so concurrent writers number their
    frames in the order they commit; it is the last lock a write takes, after its ticket rows.
    """
    assert transaction.get_connection().in_atomic_block, "call inside the writing transaction"
    return Project.objects.advance_counters(project_id, board_seq=count)["board_seq"] - count + 1
