"""Reads of notifications. A user sees only those of projects they are still a member of."""

from django.db.models import Exists, F, Func, IntegerField, OuterRef, Q, QuerySet, Subquery
from django.http import Http404

from accounts.models import User
from projects.models import Membership

from .models import Notification

LIST_LIMIT = 20


def visible_notifications() -> QuerySet[Notification]:
    """Notifications whose user is still a member of their project (probed on the membership's unique
    (user, project) index, row by row as the notification indexes deliver them)."""
    return Notification.objects.filter(
        Exists(Membership.objects.filter(user_id=OuterRef("user_id"), project_id=OuterRef("project_id"))))


def recent_notifications(*, user: User, unread_only: bool = False) -> QuerySet[Notification]:
    """The newest first, at most LIST_LIMIT: one query, on notification_list_idx."""
    notifications = visible_notifications().filter(user=user)
    if unread_only:
        notifications = notifications.filter(read_at__isnull=True)
    return notifications.order_by("-created_at", "-id")[:LIST_LIMIT]


def unread_count(*, user: User) -> int:
    """One query, on notification_unread_idx."""
    return visible_notifications().filter(user=user, read_at__isnull=True).count()


def members_with_unread_counts(*, project_id: int, user_ids: set[int], usernames: set[str]) -> list[tuple]:
    """(user_id, username, unread, email, is_active, email_notifications) of the project's members among
    `user_ids` and `usernames`: the recipients a notification may go to, read in one statement with what its live
    frame tells them and whether it is e-mailed to them."""
    unread = (visible_notifications().filter(user_id=OuterRef("user_id"), read_at__isnull=True).order_by()
              .values(n=Func("pk", function="COUNT")))
    return list(Membership.objects.filter(project_id=project_id)
                .filter(Q(user_id__in=user_ids) | Q(user__username__in=usernames))
                .annotate(username=F("user__username"), unread=Subquery(unread, output_field=IntegerField()),
                          email=F("user__email"), is_active=F("user__is_active"),
                          email_notifications=F("user__email_notifications"))
                .values_list("user_id", "username", "unread", "email", "is_active", "email_notifications",
                             named=True))


def project_of_visible_ticket(*, user: User, ticket_id: int) -> int:
    """The project of a live ticket of a project the user is a member of; any other id, existing or not,
    reads the same (404)."""
    project_id = (Membership.objects.filter(user=user, project__tickets__pk=ticket_id,
                                            project__tickets__deleted_at__isnull=True)
                  .values_list("project_id", flat=True).first())
    if project_id is None:
        raise Http404("ticket not found")
    return project_id
