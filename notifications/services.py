"""The caller's own writes to their notifications: marking them read."""

from django.utils import timezone

from accounts.models import User

from .models import Notification


def mark_read_for_ticket(*, user: User, project_id: int, ticket_id: int) -> int:
    """Every unread notification of the user about the ticket is read now; the number marked."""
    return (Notification.objects.filter(user=user, project_id=project_id, ticket_id=ticket_id, read_at__isnull=True)
            .update(read_at=timezone.now()))


def mark_all_read(*, user: User) -> int:
    """Every unread notification of the user, those of projects they have left included: all means all."""
    return Notification.objects.filter(user=user, read_at__isnull=True).update(read_at=timezone.now())
