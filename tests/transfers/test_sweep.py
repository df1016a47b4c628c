"""Nothing stays queued or running for ever: the sweep hands out again a job whose hand-out was lost, runs again
one whose process died (its import rolled back with it), and fails it after TRANSFER_MAX_ATTEMPTS runs."""

from datetime import timedelta

from django.utils import timezone

from transfers import progress, runner
from transfers.models import Job, JobStatus

from .conftest import job_url, sample

LONG_AGO = timedelta(hours=1)


def test_a_job_whose_process_died_runs_again_then_fails(client_for, start_import, manager, run_jobs, settings):
    job_id = start_import(manager, sample("gh-issue-list.json"), filename="issues.json", source="github",
                          name="Widgets").json()["job"]["id"]
    # A run claimed it, then its process died (no sign of life since).
    Job.objects.filter(pk=job_id).update(status=JobStatus.RUNNING, attempts=1,
                                         handed_out_at=timezone.now() - LONG_AGO)
    assert runner.sweep() == [job_id]
    assert Job.objects.get(pk=job_id).status == JobStatus.QUEUED
    [job] = run_jobs()
    assert (job.status, job.attempts) == (JobStatus.SUCCEEDED, 2)


def test_a_job_that_died_as_often_as_allowed_fails(client_for, start_import, manager, settings):
    settings.TRANSFER_MAX_ATTEMPTS = 2
    job_id = start_import(manager, sample("gh-issue-list.json"), filename="issues.json", source="github",
                          name="Widgets").json()["job"]["id"]
    Job.objects.filter(pk=job_id).update(status=JobStatus.RUNNING, attempts=2, handed_out_at=timezone.now() - LONG_AGO)
    assert runner.sweep() == []
    body = client_for(manager).get(job_url(job_id)).json()["job"]
    assert (body["status"], body["error"]) == ("failed", "the job stopped with its process, 2 times")
    assert Job.objects.get(pk=job_id).upload == ""


def test_a_running_job_that_shows_signs_of_life_is_left_alone(start_import, manager):
    job_id = start_import(manager, sample("gh-issue-list.json"), filename="issues.json", source="github",
                          name="Widgets").json()["job"]["id"]
    Job.objects.filter(pk=job_id).update(status=JobStatus.RUNNING, attempts=1, handed_out_at=timezone.now() - LONG_AGO)
    progress.Progress(job_id, attempt=1).start(100)
    assert runner.sweep() == []
    assert Job.objects.get(pk=job_id).status == JobStatus.RUNNING


def test_a_queued_job_whose_hand_out_was_lost_is_handed_out_again(client_for, project, manager):
    job_id = client_for(manager).post(f"/api/v1/projects/{project.pk}/exports").json()["job"]["id"]
    assert runner.sweep() == []  # just queued: the runner has it
    Job.objects.filter(pk=job_id).update(handed_out_at=timezone.now() - LONG_AGO)
    assert runner.sweep() == [job_id]
    assert runner.sweep() == []  # handed out again now: not twice


def test_progress_as_it_goes(client_for, start_import, manager):
    job_id = start_import(manager, sample("gh-issue-list.json"), filename="issues.json", source="github",
                          name="Widgets").json()["job"]["id"]
    Job.objects.filter(pk=job_id).update(status=JobStatus.RUNNING, attempts=1)
    live = progress.Progress(job_id, attempt=1)
    live.start(1000)
    live.written_at = 0  # as if the last write were long ago
    live.set(250)
    assert client_for(manager).get(job_url(job_id)).json()["job"]["progress"] == {"done": 250, "total": 1000}


def test_a_run_replaced_by_another_records_nothing(client_for, start_import, manager, run_jobs):
    job_id = start_import(manager, sample("gh-issue-list.json"), filename="issues.json", source="github",
                          name="Widgets").json()["job"]["id"]
    job = Job.objects.get(pk=job_id)
    Job.objects.filter(pk=job_id).update(status=JobStatus.RUNNING, attempts=2)  # another run has it now
    import pytest

    from transfers.errors import Superseded
    with pytest.raises(Superseded):
        runner.record_success(job, attempt=1, report={})
    assert Job.objects.get(pk=job_id).status == JobStatus.RUNNING
