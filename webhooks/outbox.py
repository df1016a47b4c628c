"""The outbox: a project's events become deliveries in the transaction that writes them.

events.publish.announce calls enqueue() for every batch of frames of a project that has an active
webhook (the flag its numbering UPDATE reads): one INSERT of a delivery per frame and endpoint that
wants it, and the new ids handed to the workers once the transaction commits. A rolled-back write
leaves no delivery; a crash after the commit loses none (the sweep finds them).
"""

from django.utils import timezone

from . import selectors, tasks
from .models import Delivery


def enqueue(*, project_id: int, frames: list[dict]) -> None:
    """One delivery per (frame, active webhook that wants its event); frames as the event log keeps them."""
    now = timezone.now()
    webhooks = selectors.active_webhooks(project_id=project_id)
    deliveries = Delivery.objects.bulk_create(
        Delivery.due_now(webhook=webhook, payload=frame, now=now)
        for frame in frames for webhook in webhooks if webhook.wants(frame["event"]))
    tasks.hand_out_after_commit([delivery.pk for delivery in deliveries])

