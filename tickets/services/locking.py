"""How a write gets hold of its ticket: read once more, under its row lock, refused if archived."""

from collections.abc import Callable

from core.errors import RuleViolation
from core.rows import locked
from tickets.models import Ticket


def locked_ticket(ticket: Ticket) -> Ticket:
    """The committed ticket under its row lock (core.rows.locked), so concurrent writes to it queue instead of
    overwriting; with the project and status the caller read, unless its status changed meanwhile."""
    fresh = locked(Ticket.objects.all(), ticket.pk, "ticket not found")
    if Ticket.project.is_cached(ticket):
        fresh.project = ticket.project
    if Ticket.status.is_cached(ticket) and fresh.status_id == ticket.status_id:
        fresh.status = ticket.status
    return fresh


def writable_ticket(ticket: Ticket, precondition: Callable[[Ticket], None] | None = None) -> Ticket:
    """Locked, and not archived (archived tickets can be read, unarchived and deleted, nothing else); then the
    caller's `precondition`, if any, judges the locked ticket (an If-Match), before anything is written."""
    ticket = locked_ticket(ticket)
    if precondition is not None:
        precondition(ticket)
    if ticket.archived_at is not None:
        raise RuleViolation("ticket is archived: unarchive it first")
    return ticket
