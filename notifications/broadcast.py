"""Live delivery: each new notification goes, once its action commits, to its user's open sockets."""

from core import live
from core.events import Event

from . import selectors
from .models import Notification
from .serializers import NotificationOutput


def notification_group(user_id: int) -> str:
    return f"user-{user_id}-notifications"


def deliver_after_commit(notifications: list[Notification]) -> None:
    """Build the frames now, inside the writing transaction (the rows are written and counted), and send
    them once it commits: a rolled-back action sends nothing."""
    counts = selectors.unread_counts(user_ids={notification.user_id for notification in notifications})
    live.send_after_commit([
        (notification_group(notification.user_id), {"type": "notification.created", "frame": {
            "event": Event.NOTIFICATION_CREATED,
            "notification": NotificationOutput(notification).data,
            "unread_count": counts.get(notification.user_id, 0),
        }})
        for notification in notifications
    ])
