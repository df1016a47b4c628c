"""The Celery tasks of the `worker:` process. They carry delivery ids only: the rows hold the rest."""

from celery import shared_task
from kombu.exceptions import ChannelError

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
    for delivery_id in attempts.sweep(queue_is_empty=_waiting_tasks() == 0):
        deliver.delay(delivery_id)


def _waiting_tasks() -> int:
    """The tasks in the broker's queue, not yet taken by a worker."""
    app = deliver.app
    with app.connection_for_read() as connection:
        try:
            return connection.default_channel.queue_declare(queue=app.conf.task_default_queue,
                                                            passive=True).message_count
        except ChannelError:  # Redis keeps no empty list: no queue is an empty queue
            return 0
