"""An endpoint's health, as its attempts and its manager change it: which of a project's webhooks are active
(the project's `has_active_webhooks` flag follows them), since when every attempt fails, and switching off
those that have failed for too long. Used by the services and by the attempts alike."""

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists

from core.rows import locked
from projects.models import Project

from .models import OPEN_STATUSES, Delivery, DeliveryStatus, Webhook


def fail_open_deliveries(*, webhook: Webhook, error: str) -> int:
    """The webhook's deliveries still waiting for an attempt are failed (one in flight records its own end)."""
    return (Delivery.objects.filter(webhook=webhook, status__in=OPEN_STATUSES, claimed_at__isnull=True)
            .update(status=DeliveryStatus.FAILED, next_attempt_at=None, error=error))


def note_endpoints_health(*, delivered: list[Webhook], failed: list[Webhook], now: datetime) -> None:
    """Track since when every attempt to each endpoint has failed (the last attempt of each decides): a delivered
    message ends that. The webhooks are the copies read before the attempts: a delivery clears the mark whatever
    its copy said, as another attempt may have failed and set it meanwhile."""
    if delivered:
        Webhook.objects.filter(pk__in=[webhook.pk for webhook in delivered], failing_since__isnull=False).update(
            failing_since=None)
    newly_failing = [webhook.pk for webhook in failed if webhook.failing_since is None]
    if newly_failing:
        Webhook.objects.filter(pk__in=newly_failing, failing_since__isnull=True).update(failing_since=now)


def disable_failing_webhooks(*, now: datetime) -> list[Webhook]:
    """Switch off the active endpoints whose messages have all failed for WEBHOOK_DISABLE_AFTER_DAYS."""
    cutoff = now - timedelta(days=settings.WEBHOOK_DISABLE_AFTER_DAYS)
    disabled = []
    for webhook in Webhook.objects.filter(active=True, failing_since__lte=cutoff):
        with transaction.atomic():
            Project.objects.lock(webhook.project_id)
            webhook = locked(Webhook.objects.all(), webhook.pk, "webhook not found")
            if not (webhook.active and webhook.failing_since and webhook.failing_since <= cutoff):
                continue  # switched on again, or delivered, meanwhile
            switch(webhook, on=False, reason=f"every delivery failed from {webhook.failing_since:%Y-%m-%d %H:%M} "
                                             f"UTC for {settings.WEBHOOK_DISABLE_AFTER_DAYS:g} days")
            webhook.save()
            refresh_project_flag(webhook.project_id)
        disabled.append(webhook)
    return disabled


def switch(webhook: Webhook, *, on: bool, reason: str) -> None:
    """On or off, with the reason; an endpoint switched off fails what still waits for it."""
    webhook.active, webhook.disabled_reason, webhook.failing_since = on, reason, None
    if not on:
        fail_open_deliveries(webhook=webhook, error="the webhook was switched off before this attempt")


def refresh_project_flag(project_id: int) -> None:
    """The project's flag from its webhooks, recomputed (never counted up or down, so it cannot drift); the
    caller holds the project's lock."""
    Project.objects.filter(pk=project_id).update(
        has_active_webhooks=Exists(Webhook.objects.filter(project_id=project_id, active=True)))
