from django.conf import settings
from django.db import models
from django.db.models import Q

from projects.models import Project
from tickets.models import Ticket


class TimerState(models.IntegerChoices):
    STOPPED = 0, "stopped"  # a finished timer, or a manual entry
    RUNNING = 1, "running"
    PAUSED = 2, "paused"


class TimeEntryQuerySet(models.QuerySet):
    def live(self):
        """Entries of tickets that are not deleted (archived ones included)."""
        return self.filter(ticket__deleted_at__isnull=True)

    def unfinished(self):
        return self.filter(is_running__in=[TimerState.RUNNING, TimerState.PAUSED])


class TimeEntry(models.Model):
    """Time a user spent on a ticket: a timer (running, paused, stopped) or a manual entry.

    `seconds` holds the finished segments; a running timer's current segment began at `started_at`.
    A stopped timer's total is rounded to whole minutes when it stops, so every stopped entry holds
    whole minutes and `minutes` is exact for it.
    """

    ticket = models.ForeignKey(Ticket, on_delete=models.CASCADE, related_name="time_entries")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="time_entries")
    # The ticket's project, kept on the entry so the report filters and groups without a join.
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="time_entries")
    seconds = models.PositiveIntegerField(default=0)
    is_running = models.PositiveSmallIntegerField(choices=TimerState, default=TimerState.STOPPED)
    started_at = models.DateTimeField(null=True, blank=True)
    stopped_at = models.DateTimeField(null=True, blank=True)
    note = models.CharField(max_length=1000, blank=True)
    # Set by the services from their clock (not auto_now_add): a manual entry's day in the report.
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField(auto_now=True)

    objects = TimeEntryQuerySet.as_manager()

    class Meta:
        verbose_name_plural = "time entries"
        constraints = [
            # One running timer per user, held by the database so simultaneous starts cannot both win.
            models.UniqueConstraint(fields=["user"], condition=Q(is_running=TimerState.RUNNING),
                                    name="timeentry_one_running_per_user"),
            models.CheckConstraint(condition=Q(is_running__in=TimerState.values), name="timeentry_state_valid"),
        ]
        indexes = [
            models.Index(fields=["ticket", "-created_at", "-id"], name="timeentry_ticket_idx"),
            models.Index(fields=["user", "is_running"], name="timeentry_user_state_idx"),
            models.Index(fields=["project", "stopped_at"], name="timeentry_report_timer_idx"),
            models.Index(fields=["project", "created_at"], name="timeentry_report_manual_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.minutes} min by user {self.user_id} on ticket {self.ticket_id}"

    @property
    def minutes(self) -> int:
        return self.seconds // 60
