"""What the periodic sweep does beside handing out due retries: it prunes old deliveries, measures the backlog,
and gives each endpoint's due retries their turn."""

from datetime import timedelta

from django.utils import timezone
from prometheus_client import REGISTRY

from webhooks import attempts
from webhooks.models import Delivery, DeliveryStatus, Webhook


def delivery(webhook: Webhook, *, age: timedelta, status: str = DeliveryStatus.DELIVERED, due: bool = False):
    created_at = timezone.now() - age
    return Delivery.objects.create(webhook=webhook, message_id=f"msg_{Delivery.objects.count()}",
                                   event="tag.created", payload={"event": "tag.created"}, status=status,
                                   created_at=created_at, next_attempt_at=created_at if due else None)


def test_finished_deliveries_older_than_the_retention_are_pruned(registered, settings):
    settings.WEBHOOK_DELIVERY_RETENTION_DAYS = 30
    webhook = Webhook.objects.get(pk=registered().webhook["id"])
    kept = [delivery(webhook, age=timedelta(days=29)),
            delivery(webhook, age=timedelta(days=31), status=DeliveryStatus.RETRYING),  # still being tried
            delivery(webhook, age=timedelta(days=29), status=DeliveryStatus.FAILED)]
    delivery(webhook, age=timedelta(days=31))
    delivery(webhook, age=timedelta(days=45), status=DeliveryStatus.FAILED)

    attempts.sweep(queue_is_empty=True)

    assert sorted(Delivery.objects.values_list("pk", flat=True)) == [each.pk for each in kept]


def test_the_backlog_and_the_age_of_its_oldest_are_measured(registered):
    webhook = Webhook.objects.get(pk=registered().webhook["id"])
    delivery(webhook, age=timedelta(hours=2), status=DeliveryStatus.RETRYING)
    delivery(webhook, age=timedelta(minutes=1), status=DeliveryStatus.PENDING)
    delivery(webhook, age=timedelta(days=3))  # delivered: not in the backlog

    attempts.sweep(queue_is_empty=True)

    assert REGISTRY.get_sample_value("tracker_webhook_backlog") == 2
    assert 7200 <= REGISTRY.get_sample_value("tracker_webhook_backlog_oldest_seconds") < 7260
    Delivery.objects.update(status=DeliveryStatus.DELIVERED)
    attempts.sweep(queue_is_empty=True)
    assert (REGISTRY.get_sample_value("tracker_webhook_backlog"),
            REGISTRY.get_sample_value("tracker_webhook_backlog_oldest_seconds")) == (0, 0)


def test_each_endpoint_s_due_retries_take_their_turn(client_for, project, manager, settings, monkeypatch):
    """An endpoint with a backlog of due retries gets SWEEP_PER_ENDPOINT of them a run: another's retry, due later,
    goes out in the same run instead of waiting behind the backlog."""
    monkeypatch.setattr(attempts, "SWEEP_PER_ENDPOINT", 3)
    monkeypatch.setattr(attempts, "SWEEP_BATCH", 5)
    busy, quiet = (Webhook.objects.create(project=project, url=f"https://{name}.example.com/", secret="x")
                   for name in ("busy", "quiet"))
    backlog = [delivery(busy, age=timedelta(minutes=10 - n), status=DeliveryStatus.RETRYING, due=True)
               for n in range(6)]
    other = delivery(quiet, age=timedelta(minutes=1), status=DeliveryStatus.RETRYING, due=True)

    first = attempts.sweep(queue_is_empty=True)
    second = attempts.sweep(queue_is_empty=True)

    assert first == [each.pk for each in backlog[:3]] + [other.pk]
    assert second == [each.pk for each in backlog[3:]]
