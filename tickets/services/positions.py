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
from core.queries import PreparedRows, Read, rows_together
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


def column(status: Status | int) -> QuerySet[Ticket]:
    """The tickets a column shows (not archived, not deleted)."""
    return Ticket.objects.active().filter(status=status)


# The position of a column's last ticket (compiled once: every creation, and every move to a column's end, reads
# it under the project's lock, through ticket_column_idx).
_last_position = PreparedRows(lambda status: column(status).order_by("-sort_order", "-id").values_list("sort_order")[:1])


@dataclass(frozen=True)
class AtEnd:
    """A place after the last ticket of the column `status`. As with Near, its read() goes in the round trip that
    takes the project's lock, and place() decides from its rows."""

    status: Status

    def read(self) -> Read:
        return _last_position, {"status": self.status.pk}

    def place(self, rows: list[tuple]) -> Place:
        return Place(rows[0][0] + GAP if rows else 0, None)


def lock_column(status: Status, *, moving: Ticket) -> frozenset[int]:
    """Lock the column's tickets and `moving` in id order, as sort_column locks a column (so the two queue
    instead of deadlocking); their ids. The caller holds no ticket yet and takes the project after this."""
    tickets = (Ticket.objects.filter(pk=moving.pk) | column(status)).select_for_update(no_key=True).order_by("pk")
    return frozenset(tickets.values_list("pk", flat=True))


@dataclass(frozen=True)
class Near:
    """A place right before the ticket `anchor_id` of the column `status`, or right after it (`after`), for the
    ticket `moving`, wherever it stands now. Its read() goes in the round trip that takes the project's lock,
    and place() decides from its rows."""

    status: Status
    moving: Ticket
    anchor_id: int
    after: bool

    @classmethod
    def of(cls, *, status: Status, moving: Ticket, before_id: int | None = None, after_id: int | None = None) -> "Near":
        """Before `before_id` or after `after_id` (one of the two is given; at the end of a column: AtEnd)."""
        near = cls(status, moving, after_id if before_id is None else before_id, before_id is None)
        if near.anchor_id == moving.pk:
            raise RuleViolation(f"{near.field}: a ticket cannot be placed next to itself", field=near.field)
        return near

    @property
    def field(self) -> str:
        return "after_id" if self.after else "before_id"

    def read(self) -> Read:
        """The read of the anchor's position and its neighbour's on the side the ticket lands, the moving ticket
        left out."""
        return _anchor_and_neighbour[self.after], {"status": self.status.pk, "moving": self.moving.pk,
                                                   "anchor": self.anchor_id}

    def place(self, rows: list[tuple]) -> Place:
        """The place, given the rows of read() read under the project's lock. A place that needs the column
        spaced out while another write holds one of its tickets raises NoRoom."""
        if not rows:
            raise RuleViolation(f"{self.field}: not a ticket of the {self.status.slug} column", field=self.field)
        in_column = self.moving if self.moving.status_id == self.status.pk else None
        place = _between(*_positions_of(rows), after=self.after, moving=in_column)
        if place is None:
            space_out(self.status, leaving_out=self.moving)
            [rows] = rows_together(self.read())
            place = _between(*_positions_of(rows), after=self.after, moving=None)
        return place


def _anchor_and_neighbour_query(status: int, moving: int, anchor: int, *, after: bool) -> QuerySet:
    """The anchor's (sort_order, id) and its neighbour's on the `after` side (None, None at the column's end),
    `moving` left out, in one statement; no row when the anchor is not in the column."""
    others = column(status).exclude(pk=moving)
    beyond = Q(sort_order__gt=OuterRef("sort_order")) | Q(sort_order=OuterRef("sort_order"), pk__gt=OuterRef("pk"))
    side = (others.filter(beyond).order_by("sort_order", "pk") if after
            else others.exclude(beyond).exclude(pk=OuterRef("pk")).order_by("-sort_order", "-pk"))
    return (others.filter(pk=anchor)
            .annotate(next_order=Subquery(side.values("sort_order")[:1]), next_id=Subquery(side.values("pk")[:1]))
            .values_list("sort_order", "pk", "next_order", "next_id"))


_anchor_and_neighbour = {after: PreparedRows(lambda status, moving, anchor, after=after: _anchor_and_neighbour_query(
    status, moving, anchor, after=after)) for after in (False, True)}


def _positions_of(rows: list[tuple]) -> tuple[tuple[int, int], tuple[int, int] | None]:
    [(order, pk, next_order, next_id)] = rows
    return (order, pk), (None if next_id is None else (next_order, next_id))


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
