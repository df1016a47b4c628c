"""The background tasks of webhooks (core/background.py: the Celery workers, or the web process without a broker).
They carry delivery ids only: the rows hold the rest."""

from celery import shared_task
from kombu.exceptions import ChannelError

from core import background

from . import attempts, sender

# Ids per task: a burst is shared out between the workers.
HAND_OUT_BATCH = 500


@shared_task(name="webhooks.tasks.deliver", ignore_result=True)
def deliver(delivery_ids: list[int]) -> None:
    """Hand the deliveries to this process's sender, which sends each when its endpoint's turn comes (nothing for
    one that is done, not due, or held by another sender)."""
    sender.submit(delivery_ids)


def hand_out(delivery_ids: list[int]) -> None:
    for batch in _batches(delivery_ids):
        background.run_soon(deliver, batch)


def hand_out_after_commit(delivery_ids: list[int]) -> None:
    """Once the current transaction commits (a broker that is down then is logged, never fails the committed
    write: the sweep hands them out later)."""
    for batch in _batches(delivery_ids):
        background.run_after_commit(deliver, batch)


def _batches(delivery_ids: list[int]) -> list[list[int]]:
    return [delivery_ids[start:start + HAND_OUT_BATCH] for start in range(0, len(delivery_ids), HAND_OUT_BATCH)]


@shared_task(name="webhooks.tasks.sweep", ignore_result=True)
def sweep() -> None:
    """BACKGROUND_SCHEDULE, every WEBHOOK_SWEEP_SECONDS; several at once hand out nothing twice."""
    hand_out(attempts.sweep(queue_is_empty=not background.uses_workers() or _waiting_tasks() == 0))


def _waiting_tasks() -> int:
    """The tasks in the broker's queue, not yet taken by a worker."""
    app = deliver.app
    with app.connection_for_read() as connection:
        try:
            return connection.default_channel.queue_declare(queue=app.conf.task_default_queue,
                                                            passive=True).message_count
        except ChannelError:  # Redis keeps no empty list: no queue is an empty queue
            return 0
