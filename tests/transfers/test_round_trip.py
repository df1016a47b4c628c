"""Export a project, import the zip as a new project: the same project comes back (decisions.md, "Round trip")."""

import csv
import io
import json
import zipfile

from django.core.files.uploadedfile import SimpleUploadedFile

from tests.factories import TicketFactory
from tests.sample_files import png
from transfers.models import Job

from .conftest import IMPORTS, job_url
from .projects import rich_project, snapshot


def exported(client, project, run_jobs) -> bytes:
    """The project's export, started, run and downloaded by `client`."""
    answer = client.post(f"/api/v1/projects/{project.pk}/exports")
    assert answer.status_code == 202, answer.json()
    job = answer.json()["job"]
    assert (job["kind"], job["source"], job["project_id"], job["status"], job["download_url"]) == (
        "export", None, project.pk, "queued", None)
    run_jobs()
    job = client.get(job_url(job["id"])).json()["job"]
    assert job["status"] == "succeeded", job
    assert job["download_url"] == f"http://testserver/api/v1/jobs/{job['id']}/download"
    download = client.get(job["download_url"])
    assert download.status_code == 200
    assert download["Content-Type"] == "application/zip"
    finished = Job.objects.get(pk=job["id"]).finished_at.date().isoformat()
    assert download["Content-Disposition"] == f'attachment; filename="{project.prefix}-export-{finished}.zip"'
    assert download.streaming
    return b"".join(download.streaming_content)


def test_an_export_carries_everything(client_for, db, run_jobs):
    project = rich_project()
    archive = zipfile.ZipFile(io.BytesIO(exported(client_for(project.owner), project, run_jobs)))
    manifest = json.loads(archive.read("project.json"))
    assert (manifest["format"], manifest["version"]) == ("tracker-export", 1)
    assert list(manifest) == ["format", "version", "exported_at", "project", "statuses", "members", "tags", "tickets",
                              "docs"]
    assert [t["number"] for t in manifest["tickets"]] == [1, 2, 3, 4, 5]  # the deleted one too
    first = manifest["tickets"][0]
    assert [(a["name"], a["size"]) for a in first["attachments"]] == [("plan.txt", 8), ("pixel.png", len(png()))]
    assert archive.read(first["attachments"][0]["path"]) == b"the plan"
    assert first["blockers"] == [2, 3]
    assert len(manifest["docs"]["articles"]) == 2 and len(manifest["docs"]["folders"]) == 3
    rows = list(csv.reader(io.StringIO(archive.read("tickets.csv").decode())))
    assert rows[0] == ["number", "ref", "title", "status", "type", "priority", "assignees", "tags", "deadline",
                       "story_points", "estimated_hours", "created_at", "updated_at", "archived"]
    assert [row[1] for row in rows[1:]] == ["APL-1", "APL-2", "APL-3", "APL-4"]  # no deleted ticket
    assert rows[1][2] == "Launch =SUM(A1)"  # only a cell that starts like a formula is quoted
    assert rows[1][7] == "ui, api" and rows[4][13] == "yes"


def test_a_cell_that_starts_like_a_formula_is_kept_as_text(client_for, project, run_jobs):
    TicketFactory(project=project, title="=HYPERLINK(\"http://evil\")")
    TicketFactory(project=project, title="+1 for dark mode")
    archive = zipfile.ZipFile(io.BytesIO(exported(client_for(project.owner), project, run_jobs)))
    rows = list(csv.reader(io.StringIO(archive.read("tickets.csv").decode())))
    assert [row[2] for row in rows[1:]] == ["'=HYPERLINK(\"http://evil\")", "'+1 for dark mode"]


def test_importing_an_export_gives_the_same_project(client_for, db, run_jobs, board_frames):
    project = rich_project()
    owner = project.owner
    client = client_for(owner)
    content = exported(client, project, run_jobs)
    answer = client.post(IMPORTS, {"file": SimpleUploadedFile("export.zip", content), "source": "tracker",
                                   "name": "Apollo again", "prefix": "APL"}, format="multipart")
    assert answer.status_code == 202, answer.json()
    run_jobs()
    job = client.get(job_url(answer.json()["job"]["id"])).json()["job"]
    assert job["status"] == "succeeded", job
    copy = job["project_id"]
    assert copy != project.pk
    assert snapshot(project.__class__.objects.get(pk=copy)) == snapshot(project)
    assert job["report"]["created"] == {"tickets": 5, "comments": 3, "checklist_items": 2, "tags": 2, "statuses": 1,
                                        "attachments": 3, "time_entries": 3, "folders": 3, "articles": 2}
    # The next ticket takes the number after the highest.
    created = client.post(f"/api/v1/projects/{copy}/tickets", {"title": "Next"}, format="json")
    assert created.json() == {"ticket_ref": "APL-6"}
