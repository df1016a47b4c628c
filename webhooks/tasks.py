"""The Celery tasks of the `worker:` process. They carry delivery ids only: the rows hold the rest."""

from celery import shared_task

from . import attempts


@shared_task(name="webhooks.tasks.deliver", ignore_result=True)
def deliver(delivery_id: int, deferrals: int = 0) -> None:
    """One attempt of a delivery (nothing if it is done, not due, or another worker has it)."""
    retry_in = attempts.run(delivery_id, deferrals=deferrals)
    if retry_in is not None:  # its endpoint is busy: come back later, without counting an attempt
        deliver.apply_async((delivery_id, deferrals + 1), countdown=retry_in)


@shared_task(name="webhooks.tasks.sweep", ignore_result=True)
def sweep() -> None:
    """Run by each worker's beat every WEBHOOK_SWEEP_SECONDS; several at once hand out nothing twice."""
    for delivery_id in attempts.sweep():
        deliver.delay(delivery_id)
