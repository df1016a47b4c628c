"""An import's run: the uploaded file copied from the storage to a local file, read by its source's module onto
the writer, all in one transaction with the job's success, so that a failed import leaves no half project (a
project it created is never committed; an existing one keeps what it had) and the files it stored are removed.
At the end, one `project.imported` frame goes to the event log, the board and the webhooks.
"""

import tempfile
from contextlib import contextmanager
from pathlib import Path

from django.core.files.storage import default_storage
from django.db import transaction

from attachments.storage import chunks_of
from core.events import Event
from events.publish import announce
from projects.services import create_project

from .errors import TransferFailed
from .models import Job
from .progress import Progress
from .runner import record_success
from .sources import sources
from .writer import Writer


def run_import(job: Job, *, attempt: int, progress: Progress) -> None:
    source = sources()[job.source]
    stored: list[str] = []  # files the writer stored: removed unless the import commits
    try:
        with local_copy(job.upload) as path, transaction.atomic():
            project = job.project or create_project(owner=job.created_by, name=job.new_project_name,
                                                    prefix=job.new_project_prefix)
            writer = Writer(project=project, actor=job.created_by, source=job.source, source_label=source.LABEL,
                            new_project=job.project is None, progress=progress, stored=stored)
            source.read(path, writer, progress)
            report = writer.finish()
            record_success(job, attempt=attempt, project=project, report=report,
                           progress_done=progress.total, progress_total=progress.total)
            announce(project_id=project.pk, actor=job.created_by, frames=[{
                "event": Event.PROJECT_IMPORTED, "job_id": job.pk, "created": report["created"],
                "updated": report["updated"]}])
    except BaseException:
        for name in stored:
            default_storage.delete(name)
        raise


@contextmanager
def local_copy(name: str):
    """The uploaded file, wherever the storage keeps it, as a local temporary file (read in chunks): a source
    reads it several times over, and a zip needs to seek."""
    if not name:
        raise TransferFailed("file: the uploaded file is gone")
    with tempfile.NamedTemporaryFile(prefix="import-", suffix=Path(name).suffix) as copy:
        try:
            for chunk in chunks_of(name):
                copy.write(chunk)
        except FileNotFoundError:
            raise TransferFailed("file: the uploaded file is gone") from None
        copy.flush()
        yield Path(copy.name)
