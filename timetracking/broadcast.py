"""Time entry events, kept in the project's event log and sent to its board viewers (events.publish)."""

from accounts.models import User
from core.events import Event
from events.publish import announce

from .models import TimeEntry
from .serializers import TimeEntryListOutput


def announce_entry(event: Event, *, entry: TimeEntry, actor: User) -> None:
    """The entry as the ticket's list shows it; for a deletion, as it was (build it before deleting)."""
    announce(project_id=entry.project_id, actor=actor,
             frames=[{"event": event, "ticket_id": entry.ticket_id, "entry": TimeEntryListOutput(entry).data}])
