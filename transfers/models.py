"""Import and export jobs, and what every imported row remembers of where it came from."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone


class JobKind(models.TextChoices):
    IMPORT = "import"
    EXPORT = "export"


class JobStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


class Source(models.TextChoices):
    TRACKER = "tracker"
    TRELLO = "trello"
    JIRA = "jira"
    GITHUB = "github"


UNFINISHED = (JobStatus.QUEUED, JobStatus.RUNNING)


class Job(models.Model):
    """One import or export, run in the background (transfers.runner); the row is the whole truth about it.

    `attempts` counts the runs that claimed it: a run's result is recorded only while the job is still its own
    (the sweep may have handed a job whose process died to another run). An import's file and an export's zip
    live in the storage under `upload` and `result`.
    """

    kind = models.CharField(max_length=10, choices=JobKind)
    source = models.CharField(max_length=10, choices=Source, blank=True)  # "" for an export
    # The project exported or imported into; for an import that creates its project, null until it succeeds.
    project = models.ForeignKey("projects.Project", null=True, blank=True, on_delete=models.CASCADE,
                                related_name="transfer_jobs")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    status = models.CharField(max_length=10, choices=JobStatus, default=JobStatus.QUEUED)
    attempts = models.PositiveSmallIntegerField(default=0)
    progress_done = models.PositiveBigIntegerField(default=0)
    progress_total = models.PositiveBigIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    handed_out_at = models.DateTimeField(default=timezone.now)  # last given to a runner (the sweep's clock)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)
    report = models.JSONField(null=True, blank=True)
    # A new project's name and prefix, for an import that creates one.
    new_project_name = models.CharField(max_length=200, blank=True)
    new_project_prefix = models.CharField(max_length=10, blank=True)
    upload = models.CharField(max_length=200, blank=True)  # the imported file, until the job ends
    upload_size = models.PositiveBigIntegerField(default=0)
    result = models.CharField(max_length=200, blank=True)  # the export's zip

    class Meta:
        indexes = [
            # The sweep reads only the unfinished jobs.
            models.Index(fields=["handed_out_at"], name="transfer_job_unfinished_idx",
                         condition=Q(status__in=UNFINISHED)),
            models.Index(fields=["created_by", "-created_at"], name="transfer_job_creator_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.pk} ({self.status})"


class SourceLink(models.Model):
    """An imported row and the id it had in its source, so that importing the same file into the same project
    again finds it instead of creating it twice. `kind` names the model (ticket, comment, checklist_item, …)."""

    project = models.ForeignKey("projects.Project", on_delete=models.CASCADE, related_name="+")
    source = models.CharField(max_length=10, choices=Source)
    kind = models.CharField(max_length=30)
    source_id = models.CharField(max_length=255)
    target_id = models.BigIntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "source", "kind", "source_id"],
                                               name="source_link_unique")]

    def __str__(self) -> str:
        return f"{self.source} {self.kind} {self.source_id} → {self.target_id}"
