"""A job's run on the background runner (core.background): claimed, run, recorded; and the sweep that takes up
the jobs whose run was lost with its process, so that none stays `queued` or `running` for ever.

A run claims the job by counting an attempt; it records its outcome only while the job is still that attempt's,
so a run the sweep presumed dead and replaced records nothing (an import's writes roll back with it).
"""

import logging
from datetime import timedelta

from django.conf import settings
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone
from redis import RedisError

from . import progress
from .errors import Superseded, TransferFailed
from .models import Job, JobKind, JobStatus

logger = logging.getLogger(__name__)

CONFLICT = "conflict: another write to the project (another import of the same file?) got there first; run it again"
INTERNAL_ERROR = "internal error: the job stopped on an unexpected error (logged on the server)"


def run(job_id: int) -> None:
    """Run the job if it is queued (nothing if another run has it or it is done): safe to call twice."""
    attempt = _claim(job_id)
    if attempt is None:
        return
    job = Job.objects.select_related("project", "created_by").get(pk=job_id)
    tracker = progress.Progress(job_id, attempt)
    tracker.alive()
    try:
        if job.kind == JobKind.EXPORT:
            from .exporter import run_export
            run_export(job, attempt=attempt, progress=tracker)
        else:
            from .importer import run_import
            run_import(job, attempt=attempt, progress=tracker)
    except Superseded:
        logger.info("job %s: attempt %s was superseded", job_id, attempt)
    except TransferFailed as failure:
        _fail(job, attempt, str(failure))
    except IntegrityError:
        logger.exception("job %s conflicted", job_id)
        _fail(job, attempt, CONFLICT)
    except Exception:
        logger.exception("job %s failed", job_id)
        _fail(job, attempt, INTERNAL_ERROR)
    finally:
        progress.forget(job_id)


def _claim(job_id: int) -> int | None:
    """Take the queued job for this run: its attempt number, or None if it is not queued."""
    now = timezone.now()
    with transaction.atomic():
        claimed = Job.objects.filter(pk=job_id, status=JobStatus.QUEUED).update(
            status=JobStatus.RUNNING, attempts=F("attempts") + 1, started_at=now, handed_out_at=now)
        if not claimed:
            return None
        return Job.objects.values_list("attempts", flat=True).get(pk=job_id)


def record_success(job: Job, *, attempt: int, **fields) -> None:
    """Mark the job succeeded with `fields` (report, project, result), in the caller's transaction when it has
    one (an import's own, so that its writes and its success commit together); Superseded if it is no
    longer this attempt's."""
    done = Job.objects.filter(pk=job.pk, attempts=attempt, status=JobStatus.RUNNING).update(
        status=JobStatus.SUCCEEDED, finished_at=timezone.now(), upload="", error="", **fields)
    if not done:
        raise Superseded
    if job.upload:
        name = job.upload
        transaction.on_commit(lambda: default_storage.delete(name), robust=True)


def _fail(job: Job, attempt: int, error: str) -> None:
    with transaction.atomic():
        failed = Job.objects.filter(pk=job.pk, attempts=attempt, status=JobStatus.RUNNING).update(
            status=JobStatus.FAILED, finished_at=timezone.now(), error=error[:2000], upload="")
        if failed and job.upload:
            name = job.upload
            transaction.on_commit(lambda: default_storage.delete(name), robust=True)


def sweep() -> list[int]:
    """Hand out again the queued jobs whose hand-out was lost, run again (or fail, after TRANSFER_MAX_ATTEMPTS)
    the running ones whose process has given no sign of life for TRANSFER_LOST_AFTER_SECONDS, and remove the
    zips of exports past EXPORT_RETENTION_HOURS and the jobs finished TRANSFER_JOB_RETENTION_DAYS ago. The ids
    of the jobs to run."""
    now = timezone.now()
    lost_before = now - timedelta(seconds=settings.TRANSFER_LOST_AFTER_SECONDS)
    to_run = []
    for job in Job.objects.filter(status__in=[JobStatus.QUEUED, JobStatus.RUNNING], handed_out_at__lt=lost_before):
        if job.status == JobStatus.RUNNING and _is_alive(job):
            continue
        if job.status == JobStatus.QUEUED or job.attempts < settings.TRANSFER_MAX_ATTEMPTS:
            requeued = Job.objects.filter(pk=job.pk, status=job.status, attempts=job.attempts).update(
                status=JobStatus.QUEUED, handed_out_at=now)
            if requeued:
                to_run.append(job.pk)
        else:
            logger.warning("job %s: its process died %s times: failed", job.pk, job.attempts)
            _fail(job, job.attempts, f"the job stopped with its process, {job.attempts} times")
    _remove_old_exports(now)
    _remove_old_jobs(now)
    return to_run


def _is_alive(job: Job) -> bool:
    try:
        reported = progress.reported(job.pk)
    except RedisError:
        return True  # cannot tell: wait for the next sweep rather than run it twice
    return reported is not None and reported[0] == job.attempts


def _remove_old_exports(now) -> None:
    expired = Job.objects.filter(kind=JobKind.EXPORT, status=JobStatus.SUCCEEDED, finished_at__lt=now - timedelta(
        hours=settings.EXPORT_RETENTION_HOURS)).exclude(result="")
    for job in expired:
        if Job.objects.filter(pk=job.pk, result=job.result).update(result=""):
            default_storage.delete(job.result)


def _remove_old_jobs(now) -> None:
    """A finished job's row answers GET /jobs/{id} (its report) for TRANSFER_JOB_RETENTION_DAYS, then goes: its
    export's zip went before (EXPORT_RETENTION_HOURS is shorter), an import's file when it ended."""
    Job.objects.filter(status__in=[JobStatus.SUCCEEDED, JobStatus.FAILED], result="", finished_at__lt=now - timedelta(
        days=settings.TRANSFER_JOB_RETENTION_DAYS)).delete()
