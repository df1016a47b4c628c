"""Starting jobs: each a row written in the request's transaction and handed to the background runner once it
commits (core.background); the runner (transfers.runner) does the rest."""

import uuid
from pathlib import PurePath

from django.core.files.storage import default_storage
from django.db import transaction

from accounts.models import User
from core.background import run_after_commit
from projects.models import Project

from .models import Job, JobKind
from .tasks import run_job


def start_export(*, project: Project, actor: User) -> Job:
    with transaction.atomic():
        job = Job.objects.create(kind=JobKind.EXPORT, project=project, created_by=actor)
        run_after_commit(run_job, job.pk)
    return job


def start_import(*, actor: User, source: str, file, project: Project | None = None, name: str = "",
                 prefix: str = "") -> Job:
    """An import of `file` (checked to be of the source's format) into `project`, else into a new project of that
    name. The file is stored first, for whichever process runs the job; it goes when the job ends."""
    stored = default_storage.save(f"imports/{uuid.uuid4().hex}{PurePath(file.name or '').suffix.lower()[:10]}", file)
    try:
        with transaction.atomic():
            job = Job.objects.create(kind=JobKind.IMPORT, source=source, project=project, created_by=actor,
                                     new_project_name=name, new_project_prefix=prefix.upper(), upload=stored,
                                     upload_size=file.size)
            run_after_commit(run_job, job.pk)
    except BaseException:
        default_storage.delete(stored)
        raise
    return job
