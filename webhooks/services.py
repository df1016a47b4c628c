"""Every write to webhooks: one function per action.

A change to which of a project's webhooks are active first locks the project row, then recomputes the
project's `has_active_webhooks` flag from the webhooks (projects.models): the numbering of events reads
that flag under the same lock, so an event is queued for exactly the webhooks active when it commits.
"""

from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from accounts.models import User
from core.errors import RuleViolation
from core.rows import UNCHANGED, locked
from core.time import timestamp
from projects.models import Project

from . import addresses, health, keys, tasks
from .models import Delivery, Webhook

MAX_WEBHOOKS_PER_PROJECT = 20
ROTATION_OVERLAP = timedelta(hours=24)
PING_EVENT = "webhook.ping"


def create_webhook(*, project: Project, actor: User, url: str, events: list[str],
                   description: str = "") -> tuple[Webhook, str]:
    """A new active endpoint and its secret, which is shown this once."""
    _check_url(url)
    secret = keys.new_secret()
    with transaction.atomic():
        Project.objects.lock(project.pk)
        if Webhook.objects.filter(project=project).count() >= MAX_WEBHOOKS_PER_PROJECT:
            raise RuleViolation(f"a project has at most {MAX_WEBHOOKS_PER_PROJECT} webhooks")
        webhook = Webhook.objects.create(project=project, url=url, events=events, description=description,
                                         secret=keys.seal(secret), created_by=actor)
        health.refresh_project_flag(project.pk)
    return webhook, secret


def update_webhook(*, webhook: Webhook, url=UNCHANGED, events=UNCHANGED, description=UNCHANGED,
                   active=UNCHANGED) -> Webhook:
    """Change what is given. Switching it off fails its waiting deliveries; switching it on clears the reason
    it was disabled for."""
    if url is not UNCHANGED:
        _check_url(url)
    with transaction.atomic():
        Project.objects.lock(webhook.project_id)
        webhook = locked(Webhook.objects.all(), webhook.pk, "webhook not found")
        for field, value in {"url": url, "events": events, "description": description}.items():
            if value is not UNCHANGED:
                setattr(webhook, field, value)
        if active is not UNCHANGED and active != webhook.active:
            health.switch(webhook, on=active, reason="")
        webhook.save()
        health.refresh_project_flag(webhook.project_id)
    return webhook


def delete_webhook(*, webhook: Webhook) -> None:
    """The endpoint and its deliveries go; a worker holding one of them finds nothing to record."""
    with transaction.atomic():
        Project.objects.lock(webhook.project_id)
        webhook.delete()
        health.refresh_project_flag(webhook.project_id)


@transaction.atomic
def rotate_secret(*, webhook: Webhook) -> tuple[Webhook, str]:
    """A new secret; the current one goes on signing beside it for ROTATION_OVERLAP."""
    webhook = locked(Webhook.objects.all(), webhook.pk, "webhook not found")
    secret = keys.new_secret()
    webhook.previous_secret, webhook.secret = webhook.secret, keys.seal(secret)
    webhook.previous_secret_expires_at = timezone.now() + ROTATION_OVERLAP
    webhook.save(update_fields=["secret", "previous_secret", "previous_secret_expires_at"])
    return webhook, secret


@transaction.atomic
def ping_webhook(*, webhook: Webhook) -> Delivery:
    """A `webhook.ping` message, sent now like any delivery."""
    _require_active(webhook)
    now = timezone.now()
    payload = {"event": PING_EVENT, "project_id": webhook.project_id, "webhook_id": webhook.pk,
               "occurred_at": timestamp(now)}
    return _queue(Delivery.due_now(webhook=webhook, payload=payload, now=now))


@transaction.atomic
def redeliver(*, delivery: Delivery) -> Delivery:
    """The same message (same webhook-id and body) as a new delivery, sent now, with its own retries. Whichever of
    the message's deliveries is delivered first settles the others (webhooks/attempts.py)."""
    _require_active(delivery.webhook)
    return _queue(Delivery.due_now(webhook=delivery.webhook, payload=delivery.payload, now=timezone.now(),
                                   message_id=delivery.message_id, original_id=delivery.original_id or delivery.pk))


def _queue(delivery: Delivery) -> Delivery:
    delivery.save()
    tasks.hand_out_after_commit([delivery.pk])
    return delivery


def _require_active(webhook: Webhook) -> None:
    if not webhook.active:
        raise RuleViolation("the webhook is not active: switch it on first", field="active")


def _check_url(url: str) -> None:
    problem = addresses.registration_problem(url)
    if problem is not None:
        raise RuleViolation(problem, field="url")
