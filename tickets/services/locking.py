"""How a write gets hold of its ticket: re-read under a row lock, refused if archived."""

from core.errors import RuleViolation
from tickets.models import Ticket


def locked_ticket(ticket: Ticket) -> Ticket:
    """The ticket re-read under a row lock, so concurrent writes to it queue instead of overwriting."""
    # The lock alone, without joins: PostgreSQL re-checks a locking query's joins against the row a
    # concurrent writer just committed, and a ticket moved meanwhile would no longer match its old status
    # row and vanish (a 500). Read again after the lock, it is the committed ticket. no_key: rows that merely
    # point at the ticket (history, a blocker link) are not held up, so two writes that each lock one ticket
    # and then the project never deadlock.
    Ticket.objects.select_for_update(no_key=True).filter(pk=ticket.pk).values_list("pk").get()
    return Ticket.objects.select_related("project", "status").get(pk=ticket.pk)


def writable_ticket(ticket: Ticket) -> Ticket:
    """Locked, and not archived (archived tickets can be read, unarchived and deleted, nothing else)."""
    ticket = locked_ticket(ticket)
    if ticket.archived_at is not None:
        raise RuleViolation("ticket is archived: unarchive it first")
    return ticket
