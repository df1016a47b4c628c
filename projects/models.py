from django.conf import settings
from django.db import connection, models
from django.db.models.functions import Lower
from django.utils import timezone

from core.queries import Read, Statement, rows_together

from .roles import Role, rank_of


class EstimationMode(models.TextChoices):
    STORY_POINTS = "story_points"
    HOURS = "hours"
    NONE = "none"


class ProjectQuerySet(models.QuerySet):
    def lock(self, project_id: int) -> None:
        """Hold the project row until the surrounding transaction ends, so that the project's writes that need
        one another's results (a column's end, a docs level's order, the blocker graph) queue here.

        NO KEY UPDATE: rows that merely reference the project (new tickets, memberships) are still inserted
        meanwhile. Every write takes it after the ticket rows it locks, so two writes never deadlock.
        """
        self.select_for_update(no_key=True).filter(pk=project_id).values_list("pk").get()

    def advance_counters(self, project_id: int, **steps: int) -> dict[str, int]:
        """Add each step to its counter of the project and answer the new values, in one statement, with
        `has_active_webhooks` as the same statement reads it.

        The UPDATE holds the project row until the surrounding transaction ends: concurrent writers
        queue on it, so what they take is consecutive and follows commit order. The flag rides along
        because whoever numbers events needs it (events.publish): read under this lock, it agrees with
        the webhooks a write's events go to, at no extra round trip.
        """
        counters, _ = self.advance_counters_then(project_id, **steps)
        return counters

    def advance_counters_then(self, project_id: int, *reads: Read, **steps: int) -> tuple[dict[str, int], list]:
        """advance_counters(), and the rows of each of `reads` (core.queries), sent in the same round trip after
        the UPDATE: each runs once the project's lock is granted, and sees what committed before."""
        quote = connection.ops.quote_name
        table = quote(self.model._meta.db_table)
        columns = {counter: quote(self.model._meta.get_field(counter).column) for counter in steps}
        assignments = ", ".join(f"{column} = {column} + %({counter})s" for counter, column in columns.items())
        returning = ", ".join([*columns.values(), quote(self.model._meta.get_field("has_active_webhooks").column)])
        update = Statement(f"UPDATE {table} SET {assignments} WHERE id = %(project_id)s RETURNING {returning}")
        [[*values, has_active_webhooks]], *rows = rows_together((update, {**steps, "project_id": project_id}), *reads)
        return {**dict(zip(steps, values, strict=True)), "has_active_webhooks": bool(has_active_webhooks)}, rows


class Project(models.Model):
    name = models.CharField(max_length=200)
    prefix = models.CharField(max_length=10)
    description = models.TextField(blank=True)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="owned_projects")
    estimation_mode = models.CharField(max_length=20, choices=EstimationMode, default=EstimationMode.STORY_POINTS)
    docs_enabled = models.BooleanField(default=True)
    # The last per-project ticket number handed out; numbers are never reused.
    last_ticket_number = models.PositiveIntegerField(default=0, editable=False)
    # The `seq` of the last real-time board frame, so viewers can tell when they missed one.
    board_seq = models.PositiveBigIntegerField(default=0, editable=False)
    # Whether any of the project's webhooks is active: kept by webhooks.services under this row's lock
    # (recomputed from the webhooks, never counted up or down), read by every numbering of events
    # (advance_counters), so a project without webhooks pays nothing for them.
    has_active_webhooks = models.BooleanField(default=False, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, through="Membership", related_name="projects")

    objects = ProjectQuerySet.as_manager()

    class Meta:
        indexes = [models.Index(Lower("name"), name="project_name_lower_idx")]

    def __str__(self) -> str:
        return f"{self.prefix} · {self.name}"


class Membership(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=20, choices=Role)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "project"], name="membership_unique_user_project")]

    def __str__(self) -> str:
        return f"{self.user} in {self.project} as {self.role}"

    @property
    def rank(self) -> int:
        return rank_of(self.role)

    def has_role(self, role: Role) -> bool:
        return self.rank >= rank_of(role)


class StatusCategory(models.TextChoices):
    BACKLOG = "backlog"
    TODO = "todo"
    ACTIVE = "active"
    REVIEW = "review"
    DONE = "done"


class Status(models.Model):
    """A board column of one project."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="statuses")
    slug = models.SlugField(max_length=50)
    label = models.CharField(max_length=100)
    color = models.CharField(max_length=7, default="#6c757d")
    icon = models.CharField(max_length=50, blank=True)
    category = models.CharField(max_length=20, choices=StatusCategory)
    hidden = models.BooleanField(default=False)
    sort_order = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["sort_order", "id"]
        verbose_name_plural = "statuses"
        constraints = [models.UniqueConstraint(fields=["project", "slug"], name="status_unique_project_slug")]

    def __str__(self) -> str:
        return self.label


class Tag(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="tags")
    name = models.CharField(max_length=100)
    color = models.CharField(max_length=7, default="#6c757d")
    sort_order = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["sort_order", "id"]
        constraints = [
            models.UniqueConstraint(Lower("name"), "project", name="tag_unique_project_name_ci"),
        ]

    def __str__(self) -> str:
        return self.name


class InvitationQuerySet(models.QuerySet):
    def pending(self):
        """Neither accepted, revoked nor expired: the ones whose link still works."""
        return self.filter(accepted_at__isnull=True, revoked_at__isnull=True, expires_at__gt=timezone.now())


class Invitation(models.Model):
    """An e-mailed invitation to join a project with a role. Only the SHA-256 digest of the link's token is kept."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField()
    role = models.CharField(max_length=20, choices=Role)
    invited_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    digest = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                    related_name="+")
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = InvitationQuerySet.as_manager()

    class Meta:
        indexes = [models.Index("project", Lower("email"), name="invitation_project_email_idx")]

    def __str__(self) -> str:
        return f"{self.email} to {self.project_id} as {self.role}"

    @property
    def closed_because(self) -> str | None:
        """Why the link no longer works ("accepted", "revoked", "expired"), or None while it does."""
        if self.accepted_at is not None:
            return "accepted"
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at <= timezone.now():
            return "expired"
        return None
