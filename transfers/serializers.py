from django.urls import reverse
from redis import RedisError
from rest_framework import serializers

from core.time import timestamp

from . import progress
from .models import Job, JobKind, JobStatus, Source


class ImportInput(serializers.Serializer):
    file = serializers.FileField(help_text="The file to import (at most IMPORT_MAX_BYTES, 100 MB by default)")
    source = serializers.ChoiceField(choices=Source.choices)
    project_id = serializers.IntegerField(required=False, min_value=1, max_value=10**18 - 1,
                                          help_text="Import into this project (you manage it); or give `name`")
    name = serializers.CharField(required=False, min_length=2, max_length=200,
                                 help_text="Import into a new project of this name (yours)")
    prefix = serializers.RegexField(r"^[A-Za-z0-9]{1,10}$", required=False,
                                    error_messages={"invalid": "must be 1 to 10 letters or digits"},
                                    help_text="The new project's prefix; derived from the name when omitted")

    def validate(self, data: dict) -> dict:
        if ("project_id" in data) == ("name" in data):
            raise serializers.ValidationError({"project_id": "give either project_id or name, not both"
                                               if "name" in data else "give either project_id or name"})
        if "prefix" in data and "name" not in data:
            raise serializers.ValidationError({"prefix": "only with name (a new project)"})
        return data


class ProgressOutput(serializers.Serializer):
    done = serializers.IntegerField()
    total = serializers.IntegerField()


class CreatedOutput(serializers.Serializer):
    tickets = serializers.IntegerField()
    comments = serializers.IntegerField()
    checklist_items = serializers.IntegerField()
    tags = serializers.IntegerField()
    statuses = serializers.IntegerField()
    attachments = serializers.IntegerField()
    time_entries = serializers.IntegerField()
    folders = serializers.IntegerField()
    articles = serializers.IntegerField()


class UpdatedOutput(serializers.Serializer):
    tickets = serializers.IntegerField()


class SkippedOutput(serializers.Serializer):
    item = serializers.CharField(help_text='Where in the file: "cards[12]", "row 7 (KEY-7)"')
    reason = serializers.CharField()


class UsersOutput(serializers.Serializer):
    matched = serializers.ListField(child=serializers.CharField(), help_text="Usernames of the users they matched")
    unmatched = serializers.ListField(child=serializers.CharField(), help_text="Names of the people who matched none")


class ReportOutput(serializers.Serializer):
    created = CreatedOutput()
    updated = UpdatedOutput()
    skipped = SkippedOutput(many=True, help_text="At most 100; skipped_count says how many in all")
    skipped_count = serializers.IntegerField()
    users = UsersOutput()


class JobOutput(serializers.Serializer):
    """A job as GET /jobs/{id} shows it; its progress as its live run reports it."""

    id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=JobKind.choices)
    source = serializers.ChoiceField(choices=Source.choices, allow_null=True)
    project_id = serializers.IntegerField(allow_null=True)
    status = serializers.ChoiceField(choices=JobStatus.choices)
    progress = ProgressOutput()
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    error = serializers.CharField(allow_null=True, help_text='Where and what, e.g. "cards[12].idList: no such list"')
    report = ReportOutput(allow_null=True, help_text="An import's, once it succeeded")
    download_url = serializers.CharField(allow_null=True, help_text="A succeeded export's zip")

    def to_representation(self, job: Job) -> dict:
        return {
            "id": job.pk, "kind": job.kind, "source": job.source or None, "project_id": job.project_id,
            "status": job.status, "progress": _progress(job), "created_at": timestamp(job.created_at),
            "started_at": timestamp(job.started_at), "finished_at": timestamp(job.finished_at),
            "error": job.error or None, "report": job.report,
            "download_url": (self.context["request"].build_absolute_uri(reverse("job-download", args=[job.pk]))
                             if job.kind == JobKind.EXPORT and job.status == JobStatus.SUCCEEDED and job.result
                             else None),
        }


def _progress(job: Job) -> dict:
    if job.status == JobStatus.RUNNING:
        try:
            live = progress.reported(job.pk)
        except RedisError:  # the cache is down: the row's figures
            live = None
        if live is not None and live[0] == job.attempts:
            return {"done": live[1], "total": live[2]}
    return {"done": job.progress_done, "total": job.progress_total}
