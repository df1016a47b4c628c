"""Who may start and read jobs: export and import into a project, its managers; a job, whoever started it and
the project's managers; anyone else 404, as if there were no such job."""

from datetime import timedelta

import pytest
from django.utils import timezone

from projects.roles import Role
from tests.conftest import ROLES
from tests.factories import MembershipFactory
from transfers.models import Job

from .conftest import job_url, sample


def export_url(project) -> str:
    return f"/api/v1/projects/{project.pk}/exports"


@pytest.mark.parametrize("role", ROLES)
def test_only_managers_export(client_for, project, member_with, role):
    answer = client_for(member_with(role)).post(export_url(project))
    if role == Role.MANAGER:
        assert answer.status_code == 202
    else:
        assert (answer.status_code, Job.objects.count()) == (403, 0)


def test_an_outsider_cannot_export_and_nobody_without_a_token(client_for, anonymous, project, outsider):
    assert client_for(outsider).post(export_url(project)).status_code == 404
    assert anonymous.post(export_url(project)).status_code == 401
    assert not Job.objects.exists()


@pytest.mark.parametrize("role", [Role.VIEWER, Role.EDITOR, Role.DEVELOPER])
def test_only_managers_import_into_a_project(start_import, project, member_with, role):
    answer = start_import(member_with(role), sample("gh-issue-list.json"), filename="issues.json", source="github",
                          project_id=project.pk)
    assert (answer.status_code, Job.objects.count()) == (403, 0)


def test_an_import_into_a_project_of_someone_else_is_404(start_import, project, outsider, anonymous):
    answer = start_import(outsider, sample("gh-issue-list.json"), filename="issues.json", source="github",
                          project_id=project.pk)
    assert (answer.status_code, answer.json()["error"]) == (404, "project not found")
    assert anonymous.post("/api/v1/imports", {"source": "github"}, format="multipart").status_code == 401
    assert not Job.objects.exists()


def test_a_job_is_read_by_who_started_it_and_the_project_managers(client_for, project, manager, editor, outsider):
    other_manager = MembershipFactory(project=project, role=Role.MANAGER).user
    job = client_for(manager).post(export_url(project)).json()["job"]
    for reader in (manager, other_manager):
        assert client_for(reader).get(job_url(job["id"])).json() == {"job": job}
    for stranger in (editor, outsider):
        answer = client_for(stranger).get(job_url(job["id"]))
        assert (answer.status_code, answer.json()["error"]) == (404, "job not found")
        assert client_for(stranger).get(f"{job_url(job['id'])}/download").status_code == 404


def test_a_new_project_import_is_read_by_its_starter_only_until_it_has_a_project(client_for, start_import, outsider,
                                                                                  manager):
    job = start_import(outsider, sample("gh-issue-list.json"), filename="issues.json", source="github",
                       name="Widgets").json()["job"]
    assert job["project_id"] is None
    assert client_for(outsider).get(job_url(job["id"])).status_code == 200
    assert client_for(manager).get(job_url(job["id"])).status_code == 404


def test_the_download_of_anything_but_a_succeeded_export_is_409(client_for, project, manager, start_import, run_jobs,
                                                                settings):
    client = client_for(manager)
    export = client.post(export_url(project)).json()["job"]
    answer = client.get(f"{job_url(export['id'])}/download")
    assert (answer.status_code, answer.json()["error"]) == (409, f"job {export['id']} is not a succeeded export "
                                                                 "(it is a queued export)")
    imported = start_import(manager, sample("gh-issue-list.json"), filename="issues.json", source="github",
                            name="Widgets").json()["job"]
    run_jobs()
    assert client.get(f"{job_url(imported['id'])}/download").status_code == 409
    assert client.get(f"{job_url(export['id'])}/download").status_code == 200
    # Past EXPORT_RETENTION_HOURS the sweep removes the zip.
    Job.objects.filter(pk=export["id"]).update(finished_at=timezone.now() - timedelta(hours=200))
    from transfers import runner
    runner.sweep()
    answer = client.get(f"{job_url(export['id'])}/download")
    assert (answer.status_code, answer.json()["error"]) == (409, f"export {export['id']} expired: start a new one")
    assert client.get(job_url(export["id"])).json()["job"]["download_url"] is None


def test_the_sweep_removes_jobs_finished_past_their_retention(client_for, project, manager, start_import, run_jobs,
                                                             settings):
    client = client_for(manager)
    imported = start_import(manager, sample("gh-issue-list.json"), filename="issues.json", source="github",
                            name="Widgets").json()["job"]
    export = client.post(export_url(project)).json()["job"]
    run_jobs()
    from transfers import runner
    retention = timedelta(days=settings.TRANSFER_JOB_RETENTION_DAYS)
    Job.objects.filter(pk=imported["id"]).update(finished_at=timezone.now() - retention - timedelta(minutes=1))
    Job.objects.filter(pk=export["id"]).update(finished_at=timezone.now() - retention + timedelta(minutes=1))
    runner.sweep()
    answer = client_for(manager).get(job_url(imported["id"]))
    assert (answer.status_code, answer.json()["code"]) == (404, "not_found")
    assert client.get(job_url(export["id"])).json()["job"]["status"] == "succeeded"
