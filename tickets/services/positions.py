"""Where a ticket stands in its column: its `sort_order`, with gaps between neighbours.

A ticket placed between two others takes a number between theirs and nothing else moves, so a move costs
the same in a column of twenty tickets as in one of twenty thousand. Only when two neighbours have no
number left between them is the column spaced out again, every ticket GAP apart in the same order: rare,
and under the project's lock like every placement, with the column's tickets locked before it (lock_column),
as every write takes the project after the ticket rows it locks. The board, the lists and a column's sort
order tickets by (sort_order, id), whatever the numbers.
"""

from dataclasses import dataclass

from django.db.models import Q, QuerySet

from core.errors import RuleViolation
from core.queries import PreparedRows
from projects.models import Status
from tickets.models import Ticket

GAP = 1024


class NoRoom(Exception):
    """The column must be spaced out, and the caller does not hold its tickets: it locks them (lock_column),
    then the project, and places the ticket again."""


@dataclass(frozen=True)
class Place:
    sort_order: int
    before_id: int | None  # the ticket it then stands right before; None at the end of the column


def column(status: Status) -> QuerySet[Ticket]:
    """The tickets a column shows (not archived, not deleted)."""
    return Ticket.objects.active().filter(status=status)


# The position of a column's last ticket (compiled once: every creation reads it, under the project's lock,
# through ticket_column_idx).
_last_position = PreparedRows(lambda status: Ticket.objects.active().filter(status_id=status)
                              .order_by("-sort_order", "-id").values_list("sort_order")[:1])


def end_of_column(status: Status) -> Place:
    """After the column's last ticket. The caller holds the project's lock."""
    last = _last_position(status=status.pk)
    return Place(last[0][0] + GAP if last else 0, None)


def lock_column(status: Status, *, moving: Ticket) -> frozenset[int]:
    """Lock the column's tickets and `moving` in id order, as sort_column locks a column (so the two queue
    instead of deadlocking); their ids. The caller holds no ticket yet and takes the project after this."""
    tickets = (Ticket.objects.filter(pk=moving.pk) | column(status)).select_for_update(no_key=True).order_by("pk")
    return frozenset(tickets.values_list("pk", flat=True))


def place_near(*, status: Status, moving: Ticket, before_id: int | None = None, after_id: int | None = None,
               locked: frozenset[int] | None = None) -> Place:
    """Right before the ticket `before_id`, or right after `after_id`, of the column `status` (neither: at its
    end). The caller holds the project's lock; `moving` is the ticket being placed, wherever it stands now.
    `locked`: the ids lock_column answered, when the caller took them before the project; without them a
    place that needs the column spaced out raises NoRoom."""
    if before_id is None and after_id is None:
        return end_of_column(status)
    field, anchor_id = ("before_id", before_id) if before_id is not None else ("after_id", after_id)
    if anchor_id == moving.pk:
        raise RuleViolation(f"{field}: a ticket cannot be placed next to itself", field=field)
    others = column(status).exclude(pk=moving.pk)
    anchor = others.filter(pk=anchor_id).values_list("sort_order", "pk").first()
    if anchor is None:
        raise RuleViolation(f"{field}: not a ticket of the {status.slug} column", field=field)
    place = _between(others, anchor, after=after_id is not None)
    if place is None:
        space_out(status, leaving_out=moving, locked=locked)
        place = _between(others, others.filter(pk=anchor_id).values_list("sort_order", "pk").get(),
                         after=after_id is not None)
    return place


def _between(others: QuerySet[Ticket], anchor: tuple[int, int], *, after: bool) -> Place | None:
    """The place next to `anchor` (its sort_order and id), with its neighbour on that side; None when the two
    have no number left between them."""
    position, anchor_id = anchor
    beyond = Q(sort_order__gt=position) | Q(sort_order=position, pk__gt=anchor_id)
    if after:
        neighbour = others.filter(beyond).order_by("sort_order", "pk").values_list("sort_order", "pk").first()
        low, high, before_id = position, neighbour and neighbour[0], neighbour and neighbour[1]
    else:
        neighbour = others.exclude(beyond).exclude(pk=anchor_id).order_by("-sort_order", "-pk").values_list(
            "sort_order", "pk").first()
        low, high, before_id = neighbour and neighbour[0], position, anchor_id
    if low is None:
        return Place(high - GAP, before_id)
    if high is None:
        return Place(low + GAP, None)
    return Place((low + high) // 2, before_id) if high - low >= 2 else None


def space_out(status: Status, *, leaving_out: Ticket, locked: frozenset[int] | None) -> None:
    """Every ticket of the column GAP apart, in the same order; the caller holds the project's lock and, taken
    before it, the `locked` tickets. NoRoom if it holds none, or if a ticket entered the column since it
    locked them (it would be written unlocked, while its own writer may be waiting for the project)."""
    if locked is None:
        raise NoRoom()
    tickets = list(column(status).exclude(pk=leaving_out.pk).order_by("sort_order", "pk").only("pk", "sort_order"))
    if not locked.issuperset(ticket.pk for ticket in tickets):
        raise NoRoom()
    for index, ticket in enumerate(tickets):
        ticket.sort_order = index * GAP
    Ticket.objects.bulk_update(tickets, ["sort_order"], batch_size=1000)


def successor(ticket: Ticket) -> int | None:
    """The id of the ticket right after `ticket` in its column, None at the end."""
    return (column(ticket.status).filter(Q(sort_order__gt=ticket.sort_order)
                                         | Q(sort_order=ticket.sort_order, pk__gt=ticket.pk))
            .order_by("sort_order", "pk").values_list("pk", flat=True).first())
