"""The Celery tasks of import and export jobs: they carry job ids only, the rows say the rest."""

from celery import shared_task

from core.background import run_soon

from . import runner


@shared_task(name="transfers.tasks.run_job", ignore_result=True)
def run_job(job_id: int) -> None:
    runner.run(job_id)


@shared_task(name="transfers.tasks.sweep", ignore_result=True)
def sweep() -> None:
    """BACKGROUND_SCHEDULE: jobs lost with their process are run again or failed."""
    for job_id in runner.sweep():
        run_soon(run_job, job_id)
