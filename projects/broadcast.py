"""Tag events, kept in the project's event log and sent to its board viewers (events.publish)."""

from accounts.models import User
from core.events import Event
from events.publish import announce

from .models import Tag
from .serializers import TagOutput


def announce_tag(event: Event, *, tag: Tag, actor: User) -> None:
    """The tag as the API shows it; for a deletion, as it was (build it before deleting)."""
    announce(project_id=tag.project_id, actor=actor, frames=[{"event": event, "tag": TagOutput(tag).data}])
