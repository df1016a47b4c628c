"""How a write that does not change the ticket itself (a time entry on it) holds it still: read once more,
under its row lock, refused if archived. Writes to the ticket hold its whole state instead (tickets/state.py).

Private Django APIs this module relies on (tests/core/test_django_internals.py resolves each of them and
fails loudly when an upgrade moves one):
- `django.db.models.fields.related_descriptors.ForwardManyToOneDescriptor.is_cached`: whether the caller's
  ticket holds its project and status already (then they are handed on rather than read again).
"""

from core.errors import RuleViolation
from core.rows import locked
from tickets.models import Ticket


def writable_ticket(ticket: Ticket) -> Ticket:
    """The committed ticket under its row lock (core.rows.locked), so concurrent writes to it queue instead of
    overwriting; with the project and status the caller read, unless its status changed meanwhile. Refused
    when archived (archived tickets can be read, unarchived and deleted, nothing else)."""
    fresh = locked(Ticket.objects.all(), ticket.pk, "ticket not found")
    if Ticket.project.is_cached(ticket):
        fresh.project = ticket.project
    if Ticket.status.is_cached(ticket) and fresh.status_id == ticket.status_id:
        fresh.status = ticket.status
    if fresh.archived_at is not None:
        raise RuleViolation("ticket is archived: unarchive it first")
    return fresh
