"""The one way a project's events leave a write: numbered and kept inside its transaction, sent after commit.

A frame carries a `seq` taken in the same transaction: numbers follow commit order without gaps, a
rolled-back write takes none, keeps no row and sends nothing. It also carries `occurred_at`, the moment it was
numbered: the same on the board socket, in the feed and in every webhook attempt (one event, one time). Each frame is kept as a ProjectEvent
row exactly as it is sent, so a viewer that missed frames reads them back (events/replay.py, the
feed), and becomes a delivery to each of the project's active webhooks that wants it (the outbox,
webhooks/outbox.py), in the same transaction. Nothing is read again after commit.
"""

import json
from collections.abc import Sequence
from typing import NamedTuple

from django.db import connection, transaction
from django.utils import timezone

from accounts.models import User
from core import live
from core.queries import Read
from core.time import timestamp
from projects.models import Project
from webhooks import outbox

from .models import ProjectEvent


class Numbers(NamedTuple):
    """Frame numbers taken under the project's row lock, and what the same UPDATE read: whether the
    project has an active webhook (projects.models.ProjectQuerySet.advance_counters)."""

    first_seq: int
    has_active_webhooks: bool

    @classmethod
    def of(cls, counters: dict, count: int = 1) -> "Numbers":
        """From advance_counters' answer, `count` frames numbered by its board_seq step."""
        return cls(counters["board_seq"] - count + 1, counters["has_active_webhooks"])


def board_group(project_id: int) -> str:
    return f"project-{project_id}-board"


def announce(*, project_id: int, frames: list[dict], actor: User, numbers: Numbers | None = None) -> None:
    """Number the frames, keep them, queue them for the project's webhooks, and publish them in one message
    once the current transaction commits.

    `numbers`: the frames' numbers were already taken in this transaction, with another of the project's
    counters in the same UPDATE (a ticket's creation takes its number and its frame's seq together).
    """
    if not frames:
        return
    actor_ref = {"id": actor.pk, "name": actor.display_name}
    now = timezone.now()
    frames = [{**frame, "project_id": project_id, "actor": actor_ref, "occurred_at": timestamp(now)}
              for frame in frames]
    kept_with_numbers = numbers is None and connection.vendor == "postgresql"
    if kept_with_numbers:
        numbers = _numbered_and_kept(project_id=project_id, frames=frames, actor=actor, now=now)
    else:
        numbers = numbers or reserve_seq(project_id=project_id, count=len(frames))
    frames = [{**frame, "seq": numbers.first_seq + offset} for offset, frame in enumerate(frames)]
    if not kept_with_numbers:
        ProjectEvent.objects.bulk_create(
            ProjectEvent(project_id=project_id, seq=frame["seq"], event=frame["event"], actor=actor, payload=frame,
                         created_at=now) for frame in frames)
    if numbers.has_active_webhooks:
        outbox.enqueue(project_id=project_id, frames=frames)
    live.send_after_commit([(board_group(project_id), {"type": "board.frames", "frames": frames})])


def _numbered_and_kept(*, project_id: int, frames: list[dict], actor: User, now) -> Numbers:
    """What reserve_seq() and the ProjectEvent rows' INSERT do, in one statement (PostgreSQL: the UPDATE of the
    project's counter feeds the INSERT as a data-modifying WITH): `frames` (without their seq) kept under
    consecutive new numbers, each row's payload the frame with its seq."""
    quote = connection.ops.quote_name

    def column(model, name: str) -> str:
        return quote(model._meta.get_field(name).column)

    project_table, event_table = quote(Project._meta.db_table), quote(ProjectEvent._meta.db_table)
    board_seq, count = column(Project, "board_seq"), len(frames)
    position = "counters.last - %s + frame.position"  # the seq of the frame at `position` (1-based)
    sql = (
        f"WITH counters AS (UPDATE {project_table} SET {board_seq} = {board_seq} + %s "
        f"WHERE {column(Project, 'id')} = %s RETURNING {board_seq} AS last, "
        f"{column(Project, 'has_active_webhooks')} AS has_active_webhooks) "
        f"INSERT INTO {event_table} ({column(ProjectEvent, 'project')}, {column(ProjectEvent, 'seq')}, "
        f"{column(ProjectEvent, 'event')}, {column(ProjectEvent, 'actor')}, {column(ProjectEvent, 'payload')}, "
        f"{column(ProjectEvent, 'created_at')}) "
        f"SELECT %s, {position}, frame.event, %s, frame.payload || jsonb_build_object('seq', {position}), %s "
        "FROM counters, unnest(%s::text[], %s::text[]::jsonb[]) WITH ORDINALITY AS frame(event, payload, position) "
        "RETURNING (SELECT last FROM counters), (SELECT has_active_webhooks FROM counters)"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [count, project_id, project_id, count, actor.pk, count, now,
                             [str(frame["event"]) for frame in frames], [json.dumps(frame) for frame in frames]])
        last, has_active_webhooks = cursor.fetchone()
    return Numbers(last - count + 1, has_active_webhooks)


def reserve_seq(*, project_id: int, count: int = 1) -> Numbers:
    """`count` consecutive frame numbers of the project.

    The UPDATE holds the project row until the write commits, so concurrent writers number their
    frames in the order they commit; it is the last lock a write takes, after its ticket rows.
    """
    numbers, _ = reserve_seq_then(project_id=project_id, count=count)
    return numbers


def reserve_seq_then(*, project_id: int, reads: Sequence[Read] = (), count: int = 1) -> tuple[Numbers, list]:
    """reserve_seq(), and the rows of `reads` read under the lock it takes, in the same round trip."""
    assert transaction.get_connection().in_atomic_block, "call inside the writing transaction"
    counters, rows = Project.objects.advance_counters_then(project_id, *reads, board_seq=count)
    return Numbers.of(counters, count), rows
