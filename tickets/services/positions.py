"""Where a ticket stands in its column: its `sort_order`, with gaps between neighbours.

A ticket placed between two others takes a number between theirs and nothing else moves, so a move costs
the same in a column of twenty tickets as in one of twenty thousand. Only when two neighbours have no
number left between them is the column spaced out again, every ticket GAP apart in the same order: rare,
and under the project's lock like every placement. Every write takes the project after the ticket rows it
locks, so the column's tickets are locked then only if none is held by another write (which may be waiting
for the project); otherwise the move starts again, locking them first (lock_column). The board, the lists and a column's sort
order tickets by (sort_order, id), whatever the numbers.
"""

from dataclasses import dataclass

from django.db import OperationalError, transaction
from django.db.models import OuterRef, Q, QuerySet, Subquery

from core.errors import LockFirst, RuleViolation
from core.queries import PreparedRows, Read
from projects.models import Status
from tickets.models import Ticket

GAP = 1024


class NoRoom(LockFirst):
    """The column must be spaced out, and another write holds one of its tickets: the move starts again in a
    new transaction that locks them first (`lock`: lock_column), then the project, and places the ticket."""

    def __init__(self, status: Status, moving: Ticket):
        super().__init__(lambda: lock_column(status, moving=moving))


@dataclass(frozen=True)
class Place:
    sort_order: int
    before_id: int | None  # the ticket it then stands right before; None at the end of the column
    already_there: bool = False  # the ticket placed stands there now: nothing to write


def column(status: Status) -> QuerySet[Ticket]:
    """The tickets a column shows (not archived, not deleted)."""
    return Ticket.objects.active().filter(status=status)


# The position of a column's last ticket (compiled once: every creation, and every move to a column's end, reads
# it under the project's lock, through ticket_column_idx).
_last_position = PreparedRows(lambda status: Ticket.objects.active().filter(status_id=status)
                              .order_by("-sort_order", "-id").values_list("sort_order")[:1])


def last_position_read(status: Status) -> Read:
    """The read of the column's last position, to send in the round trip that takes the project's lock: a
    ticket placed at the end of the column goes after_last() its rows."""
    return _last_position, {"status": status.pk}


def after_last(rows: list[tuple]) -> Place:
    """After the column's last ticket, given the rows of last_position_read(), read under the project's lock."""
    return Place(rows[0][0] + GAP if rows else 0, None)


def lock_column(status: Status, *, moving: Ticket) -> frozenset[int]:
    """Lock the column's tickets and `moving` in id order, as sort_column locks a column (so the two queue
    instead of deadlocking); their ids. The caller holds no ticket yet and takes the project after this."""
    tickets = (Ticket.objects.filter(pk=moving.pk) | column(status)).select_for_update(no_key=True).order_by("pk")
    return frozenset(tickets.values_list("pk", flat=True))


def place_near(*, status: Status, moving: Ticket, before_id: int | None = None, after_id: int | None = None) -> Place:
    """Right before the ticket `before_id`, or right after `after_id`, of the column `status` (one of the two
    is given; at the end of a column: after_last()). The caller holds the project's lock; `moving` is the
    ticket being placed, wherever it stands now. A place that needs the column spaced out while another
    write holds one of its tickets raises NoRoom."""
    field, anchor_id = ("before_id", before_id) if before_id is not None else ("after_id", after_id)
    if anchor_id == moving.pk:
        raise RuleViolation(f"{field}: a ticket cannot be placed next to itself", field=field)
    after = after_id is not None
    found = _with_neighbour(status, moving, anchor_id, after=after)
    if found is None:
        raise RuleViolation(f"{field}: not a ticket of the {status.slug} column", field=field)
    place = _between(*found, after=after, moving=moving if moving.status_id == status.pk else None)
    if place is None:
        space_out(status, leaving_out=moving)
        place = _between(*_with_neighbour(status, moving, anchor_id, after=after), after=after, moving=None)
    return place


def _with_neighbour(status: Status, moving: Ticket, anchor_id: int, *, after: bool) -> tuple | None:
    """The anchor's position and its neighbour's on the side the ticket lands (None at the column's end), the
    moving ticket left out, in one statement: ((sort_order, id), (sort_order, id) | None), or None when the
    anchor is not in the column."""
    others = column(status).exclude(pk=moving.pk)
    beyond = Q(sort_order__gt=OuterRef("sort_order")) | Q(sort_order=OuterRef("sort_order"), pk__gt=OuterRef("pk"))
    side = (others.filter(beyond).order_by("sort_order", "pk") if after
            else others.exclude(beyond).exclude(pk=OuterRef("pk")).order_by("-sort_order", "-pk"))
    row = (others.filter(pk=anchor_id)
           .annotate(next_order=Subquery(side.values("sort_order")[:1]), next_id=Subquery(side.values("pk")[:1]))
           .values_list("sort_order", "pk", "next_order", "next_id").first())
    if row is None:
        return None
    return (row[0], row[1]), (None if row[3] is None else (row[2], row[3]))


def _between(anchor: tuple[int, int], neighbour: tuple[int, int] | None, *, after: bool,
             moving: Ticket | None) -> Place | None:
    """The place next to `anchor` (its sort_order and id), beside `neighbour` on that side; None when the two
    have no number left between them. `moving`: the ticket placed, when it is in this column already."""
    low, high = (anchor, neighbour) if after else (neighbour, anchor)
    before_id = high and high[1]
    if moving is not None:
        here = (moving.sort_order, moving.pk)
        if (low is None or low < here) and (high is None or here < high):
            return Place(moving.sort_order, before_id, already_there=True)
    if low is None:
        return Place(high[0] - GAP, before_id)
    if high is None:
        return Place(low[0] + GAP, None)
    return Place((low[0] + high[0]) // 2, before_id) if high[0] - low[0] >= 2 else None


def space_out(status: Status, *, leaving_out: Ticket) -> None:
    """Every ticket of the column GAP apart, in the same order; the caller holds the project's lock, so no
    ticket enters the column meanwhile. Its tickets are locked without waiting (a write holding one may be
    waiting for the project): NoRoom when one is held elsewhere; held by this transaction already
    (lock_column), they are this write's."""
    try:
        with transaction.atomic():  # a savepoint: a lock refused must not end the whole transaction
            tickets = list(column(status).exclude(pk=leaving_out.pk).select_for_update(no_key=True, nowait=True)
                           .order_by("sort_order", "pk").only("pk", "sort_order"))
    except OperationalError:  # another write holds one of them
        raise NoRoom(status, leaving_out) from None
    for index, ticket in enumerate(tickets):
        ticket.sort_order = index * GAP
    Ticket.objects.bulk_update(tickets, ["sort_order"], batch_size=1000)
