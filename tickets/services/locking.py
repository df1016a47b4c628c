"""How a write gets hold of its ticket: re-read under a row lock, refused if archived."""

from core.errors import RuleViolation
from tickets.models import Ticket


def locked_ticket(ticket: Ticket) -> Ticket:
    """The ticket re-read under a row lock, so concurrent writes to it queue instead of overwriting."""
    # of=("self",): the ticket row only, not its project and status rows joined alongside. no_key: rows
    # that merely point at the ticket (history, a blocker link from another write) are not held up by it,
    # which is what keeps two writes that each lock one ticket and then the project from deadlocking.
    return (Ticket.objects.select_for_update(of=("self",), no_key=True).select_related("project", "status")
            .get(pk=ticket.pk))


def writable_ticket(ticket: Ticket) -> Ticket:
    """Locked, and not archived (archived tickets can be read, unarchived and deleted, nothing else)."""
    ticket = locked_ticket(ticket)
    if ticket.archived_at is not None:
        raise RuleViolation("ticket is archived: unarchive it first")
    return ticket
