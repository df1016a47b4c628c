"""Handing deliveries to whatever sends them: the Celery workers when a broker is configured (REDIS_URL),
else the web process's own threads (webhooks/local.py). Only ids travel; the rows say the rest."""

from django.conf import settings
from django.db import transaction

from . import local, tasks


def hand_out_after_commit(delivery_ids: list[int]) -> None:
    """Hand the deliveries out once the current transaction commits. robust: a broker that is down is
    logged and never fails the committed write; the sweep hands them out later."""
    if delivery_ids:
        transaction.on_commit(lambda: hand_out(delivery_ids), robust=True)


def hand_out(delivery_ids: list[int], *, countdown: float = 0, deferrals: int = 0) -> None:
    if uses_workers():
        with tasks.deliver.app.producer_or_acquire() as producer:  # one broker connection for them all
            for delivery_id in delivery_ids:
                tasks.deliver.apply_async((delivery_id, deferrals), countdown=countdown or None, producer=producer)
    else:
        local.runner().submit(delivery_ids, countdown=countdown, deferrals=deferrals)


def uses_workers() -> bool:
    return bool(settings.CELERY_BROKER_URL)


def start_in_server() -> None:
    """Run once by a server process as it loads the application (config/asgi.py). Without a broker the process
    sends deliveries itself: its runner and sweep start now, not at its first hand-out, so that retries due and
    deliveries left by a previous run go out, and endpoints failing for days are switched off, with no new event."""
    if not uses_workers():
        local.runner()
