"""Reading webhooks and their deliveries."""

from django.db.models import QuerySet

from core.rows import found

from .models import Delivery, Webhook


def project_webhooks(*, project_id: int) -> QuerySet[Webhook]:
    return Webhook.objects.filter(project_id=project_id).order_by("id")


def active_webhooks(*, project_id: int) -> list[Webhook]:
    """The endpoints a project's events go to (the project_active index)."""
    return list(Webhook.objects.filter(project_id=project_id, active=True).only("id", "events"))


def webhook(*, webhook_id: int) -> Webhook:
    return found(Webhook.objects.filter(pk=webhook_id), "webhook not found")


def webhook_deliveries(*, webhook: Webhook, limit: int) -> QuerySet[Delivery]:
    """The webhook's latest deliveries, newest first."""
    return Delivery.objects.filter(webhook=webhook).order_by("-id")[:limit]


def webhook_delivery(*, webhook: Webhook, delivery_id: int) -> Delivery:
    return found(Delivery.objects.filter(webhook=webhook, pk=delivery_id), "delivery not found")


def delivery_with_webhook(*, delivery_id: int) -> Delivery | None:
    return Delivery.objects.select_related("webhook").filter(pk=delivery_id).first()
