from django.conf import settings
from django.db import models
from django.db.models import Q

from attachments.models import StoredFile
from projects.models import Project, Status, Tag


class TicketType(models.TextChoices):
    BUG = "bug"
    FEATURE = "feature"
    RELEASE = "release"


class Priority(models.TextChoices):
    URGENT = "urgent"
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class TicketQuerySet(models.QuerySet):
    def live(self):
        """Not deleted: archived tickets included."""
        return self.filter(deleted_at__isnull=True)

    def active(self):
        """On the board: neither deleted nor archived."""
        return self.filter(deleted_at__isnull=True, archived_at__isnull=True)


class Ticket(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="tickets")
    number = models.PositiveIntegerField(editable=False)
    title = models.CharField(max_length=255)
    description = models.TextField(blank=True, max_length=100_000)
    # RESTRICT: a column with tickets cannot be deleted alone, but goes with its whole project.
    status = models.ForeignKey(Status, on_delete=models.RESTRICT, related_name="tickets")
    type = models.CharField(max_length=10, choices=TicketType, default=TicketType.FEATURE)
    priority = models.CharField(max_length=10, choices=Priority, null=True, blank=True)
    deadline = models.DateField(null=True, blank=True)
    story_points = models.PositiveSmallIntegerField(null=True, blank=True)
    estimated_hours = models.DecimalField(max_digits=7, decimal_places=2, null=True, blank=True)
    sort_order = models.BigIntegerField(default=0)  # tickets/services/positions.py
    tags = models.ManyToManyField(Tag, blank=True, related_name="tickets")
    assignees = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="assigned_tickets")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="created_tickets")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    archived_at = models.DateTimeField(null=True, blank=True)
    deleted_at = models.DateTimeField(null=True, blank=True)
    # When the ticket last entered a done-category column (null while outside one): velocity.
    done_at = models.DateTimeField(null=True, blank=True)
    # What the ticket's detail shows, as of which write: every write to the ticket or to what its detail shows
    # adds one in its own UPDATE (tickets/state.py), and the detail's ETag is made of it.
    version = models.PositiveIntegerField(default=1, editable=False)

    objects = TicketQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "number"], name="ticket_unique_project_number"),
            models.CheckConstraint(
                condition=Q(story_points__isnull=True) | Q(story_points__lte=3), name="ticket_story_points_0_3"
            ),
        ]
        indexes = [
            models.Index(fields=["project", "status", "sort_order", "id"], name="ticket_board_idx"),
            # The list in order, a page after a cursor: one range of entries whatever the page's place.
            models.Index(fields=["project", "sort_order", "id"],
                         condition=Q(archived_at__isnull=True, deleted_at__isnull=True), name="ticket_list_idx"),
            models.Index(fields=["project", "-archived_at"], name="ticket_archived_idx"),
            models.Index(fields=["project", "-updated_at"], name="ticket_updated_idx"),
            models.Index(fields=["project", "done_at"], name="ticket_done_idx"),
            # A column in order: its end (where a created or moved ticket goes) and a ticket's neighbours (where
            # a relative move lands), read under the project's row lock: one entry whatever the column's size.
            # Keyed by the status, which belongs to one project, so that the planner finds it even without
            # statistics of a new project's statuses (the board index, led by the project, then lost to a
            # filtered scan of the whole project).
            models.Index(fields=["status", "sort_order", "id"],
                         condition=Q(archived_at__isnull=True, deleted_at__isnull=True), name="ticket_column_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.prefix_ref} {self.title}"

    @property
    def prefix_ref(self) -> str:
        return f"{self.project.prefix}-{self.number}"


class Comment(models.Model):
    """A comment on a ticket, called a "reaction" in the interface's paths."""

    ticket = models.ForeignKey(Ticket, on_delete=models.CASCADE, related_name="comments")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="ticket_comments")
    message = models.TextField(max_length=20_000)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    deleted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        # The shown comments of a ticket, in their order; its id included, a count of them (cards, search
        # results) reads this index alone.
        indexes = [models.Index(fields=["ticket", "created_at", "id"], condition=Q(deleted_at__isnull=True),
                                name="comment_live_idx")]

    def __str__(self) -> str:
        return f"comment {self.pk} on ticket {self.ticket_id}"


class ChecklistItem(models.Model):
    ticket = models.ForeignKey(Ticket, on_delete=models.CASCADE, related_name="checklist_items")
    text = models.CharField(max_length=500)
    done = models.BooleanField(default=False)
    sort_order = models.IntegerField(default=0)

    class Meta:
        ordering = ["sort_order", "id"]
        indexes = [models.Index(fields=["ticket", "sort_order"], name="checklist_ticket_idx")]

    def __str__(self) -> str:
        return self.text


class Blocker(models.Model):
    """`blocker` blocks `ticket`."""

    ticket = models.ForeignKey(Ticket, on_delete=models.CASCADE, related_name="blocked_by_links")
    blocker = models.ForeignKey(Ticket, on_delete=models.CASCADE, related_name="blocking_links")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["ticket", "blocker"], name="blocker_unique_pair"),
            models.CheckConstraint(condition=~Q(ticket=models.F("blocker")), name="blocker_not_itself"),
        ]


class Attachment(StoredFile):
    ticket = models.ForeignKey(Ticket, on_delete=models.CASCADE, related_name="attachments")
    comment = models.ForeignKey(Comment, on_delete=models.CASCADE, null=True, blank=True, related_name="attachments")


class Activity(models.Model):
    """One write to a ticket or its content: who, what, and the fields it changed (old and new)."""

    ticket = models.ForeignKey(Ticket, on_delete=models.CASCADE, related_name="activities")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    action = models.CharField(max_length=50)
    changes = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "activities"
        indexes = [models.Index(fields=["ticket", "-created_at", "-id"], name="activity_ticket_idx")]

    def __str__(self) -> str:
        return f"{self.action} on ticket {self.ticket_id}"
