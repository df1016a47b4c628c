from django.conf import settings
from django.db import models
from django.db.models import Q

from projects.models import Project


class NotificationType(models.TextChoices):
    REACTION = "reaction"
    ASSIGNMENT = "assignment"
    STATUS_CHANGE = "status_change"
    MENTION = "mention"


class EmailStatus(models.TextChoices):
    """Where a notification's e-mail stands (notifications/emails.py); blank once e-mailed, or never to be."""

    PENDING = "pending"  # waits for its batch, or the digest
    HELD = "held"  # came due while its recipient was at EMAIL_MAX_PER_USER_PER_HOUR: goes in the next hour


class Notification(models.Model):
    """Something a user is told about a ticket: written by the action's own service (notifications.rules).

    Indexes, by the query each one serves (a user may hold 100,000 old rows):
    - notification_list_idx (user, -created_at, -id): the list, `WHERE user_id = … ORDER BY created_at DESC,
      id DESC LIMIT 20`, read in index order and stopped after 20 visible rows.
    - notification_unread_idx (user, project, ticket) WHERE read_at IS NULL: only unread rows, so it stays
      small however many read ones pile up. The unread count (user, then the membership check per project),
      the `unread` filter of the list, mark-read-for-ticket (user, project, ticket) and mark-all-read (user).
    - notification_email_idx (created_at) WHERE email_status <> '': the few rows whose e-mail is still to go,
      which the e-mail sweep reads every few seconds.

    The e-mail's state is kept on the row, written by the same INSERT: e-mail costs a notifying write nothing
    more than these columns.
    """

    # No index of its own: both indexes below start with it.
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications",
                             db_index=False)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    ticket = models.ForeignKey("tickets.Ticket", on_delete=models.CASCADE, related_name="notifications")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    type = models.CharField(max_length=20, choices=NotificationType)
    message = models.CharField(max_length=500)
    read_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    email_status = models.CharField(max_length=10, choices=EmailStatus, blank=True, default="")
    email_quote = models.TextField(blank=True, default="", help_text="the comment's text its e-mail quotes")

    class Meta:
        indexes = [
            models.Index(fields=["user", "-created_at", "-id"], name="notification_list_idx"),
            models.Index(fields=["user", "project", "ticket"], condition=Q(read_at__isnull=True),
                         name="notification_unread_idx"),
            models.Index(fields=["created_at"], condition=~Q(email_status=""), name="notification_email_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.type} for {self.user_id}: {self.message}"

