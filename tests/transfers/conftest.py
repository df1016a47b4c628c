from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.conftest import GroupListener
from tests.factories import UserFactory
from tickets.broadcast import board_group
from transfers import runner
from transfers.models import Job, JobStatus

SAMPLES = Path(__file__).parent / "samples"
IMPORTS = "/api/v1/imports"


def sample(name: str) -> bytes:
    return (SAMPLES / name).read_bytes()


def job_url(job_id: int) -> str:
    return f"/api/v1/jobs/{job_id}"


@pytest.fixture
def start_import(client_for):
    """POST /imports as `user`: the answer (202 with the queued job, or the refusal)."""

    def start(user, content: bytes, *, filename: str, source: str, **fields):
        return client_for(user).post(IMPORTS, {"file": SimpleUploadedFile(filename, content), "source": source,
                                               **fields}, format="multipart")

    return start


@pytest.fixture
def run_jobs(django_capture_on_commit_callbacks):
    """Run every queued job here and now, as the background runner would, and what it sends after its commit;
    the jobs as they end."""

    def run() -> list[Job]:
        ids = list(Job.objects.filter(status=JobStatus.QUEUED).order_by("pk").values_list("pk", flat=True))
        with django_capture_on_commit_callbacks(execute=True):
            for job_id in ids:
                runner.run(job_id)
        return list(Job.objects.filter(pk__in=ids).order_by("pk"))

    return run


@pytest.fixture
def people(db):
    """The users the samples' people match: by username (ada; gracehopper in Trello and GitHub) and by e-mail (Grace in Jira)."""
    return {"ada": UserFactory(username="ada", name="Ada Lovelace"),
            "grace": UserFactory(username="gracehopper", name="Grace Hopper", email="grace@example.com")}


@pytest.fixture
def board_frames():
    """The frames the board sockets of a project receive (a listener in its group)."""
    listeners = []

    def listen(project_id: int) -> GroupListener:
        listener = GroupListener(board_group(project_id))
        listeners.append(listener)
        return listener

    yield listen
    for listener in listeners:
        listener.close()
