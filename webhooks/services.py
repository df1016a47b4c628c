"""Every write to webhooks: one function per action.

A change to which of a project's webhooks are active first locks the project row, then recomputes the
project's `has_active_webhooks` flag from the webhooks (projects.models): the numbering of events reads
that flag under the same lock, so an event is queued for exactly the webhooks active when it commits.
"""

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Exists
from django.utils import timezone

from accounts.models import User
from core.errors import RuleViolation
from projects.models import Project

from . import addresses, dispatch, keys
from .models import OPEN_STATUSES, Delivery, DeliveryStatus, Webhook

MAX_WEBHOOKS_PER_PROJECT = 20
ROTATION_OVERLAP = timedelta(hours=24)
PING_EVENT = "webhook.ping"
UNCHANGED = object()


def create_webhook(*, project: Project, actor: User, url: str, events: list[str],
                   description: str = "") -> tuple[Webhook, str]:
    """A new active endpoint and its secret, which is shown this once."""
    _check_url(url)  # may resolve the host: before the transaction, whose lock it would hold meanwhile
    secret = keys.new_secret()
    with transaction.atomic():
        _lock_project(project.pk)
        if Webhook.objects.filter(project=project).count() >= MAX_WEBHOOKS_PER_PROJECT:
            raise RuleViolation(f"a project has at most {MAX_WEBHOOKS_PER_PROJECT} webhooks")
        webhook = Webhook.objects.create(project=project, url=url, events=events, description=description,
                                         secret=keys.seal(secret), created_by=actor)
        _refresh_project_flag(project.pk)
    return webhook, secret


def update_webhook(*, webhook: Webhook, url=UNCHANGED, events=UNCHANGED, description=UNCHANGED,
                   active=UNCHANGED) -> Webhook:
    """Change what is given. Switching it off fails its waiting deliveries; switching it on clears the reason
    it was disabled for."""
    if url is not UNCHANGED:
        _check_url(url)
    with transaction.atomic():
        _lock_project(webhook.project_id)
        webhook = Webhook.objects.select_for_update().get(pk=webhook.pk)
        for field, value in {"url": url, "events": events, "description": description}.items():
            if value is not UNCHANGED:
                setattr(webhook, field, value)
        if active is not UNCHANGED and active != webhook.active:
            _switch(webhook, on=active, reason="")
        webhook.save()
        _refresh_project_flag(webhook.project_id)
    return webhook


def delete_webhook(*, webhook: Webhook) -> None:
    """The endpoint and its deliveries go; a worker holding one of them finds nothing to record."""
    with transaction.atomic():
        _lock_project(webhook.project_id)
        webhook.delete()
        _refresh_project_flag(webhook.project_id)


@transaction.atomic
def rotate_secret(*, webhook: Webhook) -> tuple[Webhook, str]:
    """A new secret; the current one goes on signing beside it for ROTATION_OVERLAP."""
    webhook = Webhook.objects.select_for_update().get(pk=webhook.pk)
    secret = keys.new_secret()
    webhook.previous_secret, webhook.secret = webhook.secret, keys.seal(secret)
    webhook.previous_secret_expires_at = timezone.now() + ROTATION_OVERLAP
    webhook.save(update_fields=["secret", "previous_secret", "previous_secret_expires_at"])
    return webhook, secret


@transaction.atomic
def ping_webhook(*, webhook: Webhook) -> Delivery:
    """A `webhook.ping` message, sent now like any delivery."""
    _require_active(webhook)
    payload = {"event": PING_EVENT, "project_id": webhook.project_id, "webhook_id": webhook.pk}
    return _queue(Delivery.due_now(webhook=webhook, payload=payload, now=timezone.now()))


@transaction.atomic
def redeliver(*, delivery: Delivery) -> Delivery:
    """The same message (same webhook-id and body) as a new delivery, sent now, with its own retries."""
    _require_active(delivery.webhook)
    return _queue(Delivery.due_now(webhook=delivery.webhook, payload=delivery.payload, now=timezone.now(),
                                   message_id=delivery.message_id))


def fail_open_deliveries(*, webhook: Webhook, error: str) -> int:
    """The webhook's deliveries still waiting for an attempt are failed (one in flight records its own end)."""
    return (Delivery.objects.filter(webhook=webhook, status__in=OPEN_STATUSES, claimed_at__isnull=True)
            .update(status=DeliveryStatus.FAILED, next_attempt_at=None, error=error))


def note_endpoint_health(*, webhook: Webhook, delivered: bool, now: datetime) -> None:
    """Track since when every attempt to the endpoint has failed: a delivered message ends that."""
    if delivered and webhook.failing_since is not None:
        Webhook.objects.filter(pk=webhook.pk).update(failing_since=None)
    elif not delivered and webhook.failing_since is None:
        Webhook.objects.filter(pk=webhook.pk, failing_since__isnull=True).update(failing_since=now)


def disable_failing_webhooks(*, now: datetime) -> list[Webhook]:
    """Switch off the active endpoints whose messages have all failed for WEBHOOK_DISABLE_AFTER_DAYS."""
    cutoff = now - timedelta(days=settings.WEBHOOK_DISABLE_AFTER_DAYS)
    disabled = []
    for webhook in Webhook.objects.filter(active=True, failing_since__lte=cutoff):
        with transaction.atomic():
            _lock_project(webhook.project_id)
            webhook = Webhook.objects.select_for_update().get(pk=webhook.pk)
            if not (webhook.active and webhook.failing_since and webhook.failing_since <= cutoff):
                continue  # switched on again, or delivered, meanwhile
            _switch(webhook, on=False, reason=f"every delivery failed from {webhook.failing_since:%Y-%m-%d %H:%M} "
                                              f"UTC for {settings.WEBHOOK_DISABLE_AFTER_DAYS:g} days")
            webhook.save()
            _refresh_project_flag(webhook.project_id)
        disabled.append(webhook)
    return disabled


def _switch(webhook: Webhook, *, on: bool, reason: str) -> None:
    webhook.active, webhook.disabled_reason, webhook.failing_since = on, reason, None
    if not on:
        fail_open_deliveries(webhook=webhook, error="the webhook was switched off before this attempt")


def _queue(delivery: Delivery) -> Delivery:
    delivery.save()
    dispatch.hand_out_after_commit([delivery.pk])
    return delivery


def _require_active(webhook: Webhook) -> None:
    if not webhook.active:
        raise RuleViolation("the webhook is not active: switch it on first", field="active")


def _check_url(url: str) -> None:
    problem = addresses.registration_problem(url)
    if problem is not None:
        raise RuleViolation(problem, field="url")


def _lock_project(project_id: int) -> None:
    """The project row, held to the end of the transaction: webhook changes queue behind event writers."""
    Project.objects.select_for_update().filter(pk=project_id).values_list("pk").get()


def _refresh_project_flag(project_id: int) -> None:
    Project.objects.filter(pk=project_id).update(
        has_active_webhooks=Exists(Webhook.objects.filter(project_id=project_id, active=True)))
