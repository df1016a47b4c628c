from django.conf import settings
from django.db import models
from django.utils import timezone


class ProjectEvent(models.Model):
    """One frame a project sent, kept as sent so a client that dropped its socket can catch up exactly."""

    project = models.ForeignKey("projects.Project", on_delete=models.CASCADE, related_name="events")
    seq = models.PositiveBigIntegerField()
    event = models.CharField(max_length=64)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    payload = models.JSONField()  # the whole frame, seq included
    created_at = models.DateTimeField(default=timezone.now, db_index=True)  # pruning walks it

    class Meta:
        # Its index serves the replay and the feed: the rows of one project after a seq, in order.
        constraints = [models.UniqueConstraint(fields=["project", "seq"], name="project_event_seq_unique")]

    def __str__(self):
        return f"{self.project_id}#{self.seq} {self.event}"
