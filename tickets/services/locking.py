"""How a write gets hold of its ticket: re-read under a row lock, refused if archived."""

from core.errors import RuleViolation
from tickets.models import Ticket


def locked_ticket(ticket: Ticket) -> Ticket:
    """The ticket re-read under a row lock, so concurrent writes to it queue instead of overwriting."""
    # of=("self",): lock the ticket row only, not its project and status rows joined alongside.
    return Ticket.objects.select_for_update(of=("self",)).select_related("project", "status").get(pk=ticket.pk)


def lock_tickets(tickets: list[Ticket]) -> None:
    """Row locks on several tickets, taken in id order so that writers of overlapping sets queue, never deadlock."""
    list(Ticket.objects.select_for_update(of=("self",)).filter(pk__in=[t.pk for t in tickets]).order_by("pk")
         .values_list("pk", flat=True))


def writable_ticket(ticket: Ticket) -> Ticket:
    """Locked, and not archived (archived tickets can be read, unarchived and deleted, nothing else)."""
    ticket = locked_ticket(ticket)
    if ticket.archived_at is not None:
        raise RuleViolation("ticket is archived: unarchive it first")
    return ticket
