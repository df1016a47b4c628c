"""Live delivery: each new notification goes, once its action commits, to its user's open sockets."""

from core import live
from core.events import Event

from .models import Notification
from .serializers import NotificationOutput


def notification_group(user_id: int) -> str:
    return f"user-{user_id}-notifications"


def deliver_after_commit(notifications: list[Notification], *, unread_counts: dict[int, int]) -> None:
    """Build the frames now, inside the writing transaction (the rows are written, `unread_counts` their users'
    unread notifications with them), and send them once it commits: a rolled-back action sends nothing."""
    live.send_after_commit([
        (notification_group(notification.user_id), {"type": "notification.created", "frame": {
            "event": Event.NOTIFICATION_CREATED,
            "notification": NotificationOutput(notification).data,
            "unread_count": unread_counts[notification.user_id],
        }})
        for notification in notifications
    ])
