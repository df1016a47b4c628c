"""Sending deliveries: claim one, send it, record the outcome and schedule what follows; the sweep.

Run by the Celery tasks (webhooks/tasks.py) or by the web process's threads (webhooks/local.py). Safe to
run twice for one delivery: a worker claims the attempt with a conditional UPDATE before it sends, so
several workers never send one attempt twice; only a worker that dies between sending and recording
leaves it to be sent again (at least once), after WEBHOOK_LOST_AFTER_SECONDS.
"""

import logging
import uuid
from datetime import datetime, timedelta
from enum import StrEnum

import orjson
from cryptography.fernet import InvalidToken
from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from core.metrics import WEBHOOK_DELIVERIES

from . import health, keys, selectors, signing
from .delivery import Exchange, Failure, post, unsent
from .models import OPEN_STATUSES, Delivery, DeliveryStatus, Webhook

logger = logging.getLogger(__name__)

SWEEP_BATCH = 1000
# A busy endpoint's delivery is tried again after 0.25 s, then twice as long each time, up to 10 s.
BUSY_FIRST_WAIT, BUSY_LONGEST_WAIT = 0.25, 10.0
SLOW_ATTEMPT = timedelta(seconds=1)
UNREADABLE_SECRET = "not sent: the signing secret cannot be read with this DJANGO_SECRET_KEY; rotate it"


class Outcome(StrEnum):
    """What one attempt came to (the `outcome` of tracker_webhook_deliveries_total)."""

    DELIVERED = "delivered"  # a 2xx answer
    REJECTED = "rejected"  # any other answer, a redirect included
    TIMEOUT = "timeout"
    CONNECTION_FAILED = "connection_failed"
    ADDRESS_REFUSED = "address_refused"
    SECRET_UNREADABLE = "secret_unreadable"


def outcome_of(exchange: Exchange) -> Outcome:
    """The one place an attempt's outcome is decided."""
    if exchange.failure is None:
        return Outcome.DELIVERED if 200 <= exchange.status < 300 else Outcome.REJECTED
    return {Failure.TIMEOUT: Outcome.TIMEOUT, Failure.CONNECTION: Outcome.CONNECTION_FAILED,
            Failure.ADDRESS: Outcome.ADDRESS_REFUSED, Failure.SECRET: Outcome.SECRET_UNREADABLE}[exchange.failure]


def run(delivery_id: int, *, deferrals: int = 0) -> float | None:
    """One attempt of the delivery, if it is due and no other worker sends it. Answers the seconds after
    which to come back when its endpoint already has WEBHOOK_ENDPOINT_CONCURRENCY attempts in flight."""
    now = timezone.now()
    delivery = selectors.delivery_with_webhook(delivery_id=delivery_id)
    if delivery is None or delivery.status not in OPEN_STATUSES or delivery.next_attempt_at > now:
        return None  # deleted, done, or a retry not yet due (the sweep hands it out then)
    if not delivery.webhook.active:
        health.fail_open_deliveries(webhook=delivery.webhook, error="the webhook is not active")
        return None
    claim = uuid.uuid4()
    taken = _claim_within_capacity(delivery, claim, now)
    if taken is None:
        # Its task comes back by itself: a fresh hand-out keeps the sweep from taking it for lost and starting
        # another chain of deferrals behind the busy endpoint.
        Delivery.objects.filter(pk=delivery.pk, claimed_at__isnull=True).update(dispatched_at=now)
        return min(BUSY_FIRST_WAIT * 2 ** deferrals, BUSY_LONGEST_WAIT)
    if not taken:
        return None  # another worker has it
    try:
        body, headers = message(delivery, now)
    except InvalidToken:  # sealed under another DJANGO_SECRET_KEY (a restored dump): a new secret is needed
        record(delivery, unsent(Failure.SECRET, UNREADABLE_SECRET), claim=claim)
        return None
    if not connection.in_atomic_block:
        connection.close()  # no database connection held while the endpoint takes its time
    exchange = post(delivery.webhook.url, body=body, headers=headers, timeout=settings.WEBHOOK_TIMEOUT_SECONDS)
    record(delivery, exchange, claim=claim)
    return None


def message(delivery: Delivery, now: datetime) -> tuple[bytes, dict[str, str]]:
    """The body (the frame as JSON) and the Standard Webhooks headers of this attempt."""
    body = orjson.dumps(delivery.payload)
    return body, signing.headers(secrets=signing_secrets(delivery.webhook, now), message_id=delivery.message_id,
                                 timestamp=int(now.timestamp()), body=body)


def signing_secrets(webhook: Webhook, now: datetime) -> list[str]:
    """The current secret, and the one it replaced while that still signs (24 h after a rotation)."""
    secrets = [keys.unseal(webhook.secret)]
    if webhook.previous_secret and webhook.previous_secret_expires_at and webhook.previous_secret_expires_at > now:
        try:
            secrets.append(keys.unseal(webhook.previous_secret))
        except InvalidToken:
            pass  # the secret replaced because it could no longer be read: the new one signs alone
    return secrets


def _lost_before(now: datetime) -> datetime:
    return now - timedelta(seconds=settings.WEBHOOK_LOST_AFTER_SECONDS)


def _claim_within_capacity(delivery: Delivery, claim: uuid.UUID, now: datetime) -> bool | None:
    """Claim the attempt unless its endpoint already holds WEBHOOK_ENDPOINT_CONCURRENCY attempts (None).

    A healthy endpoint counts only its attempts in flight for over SLOW_ATTEMPT: however many messages it
    gets at once, it is never held back. Once its last attempt failed, every attempt in flight counts, and
    claims queue on its row, so that a hung endpoint holds exactly that many workers and never all of them.
    """
    in_flight = Delivery.objects.filter(webhook_id=delivery.webhook_id, claimed_at__gte=_lost_before(now))
    if delivery.webhook.failing_since is None:
        if in_flight.filter(claimed_at__lt=now - SLOW_ATTEMPT).count() >= settings.WEBHOOK_ENDPOINT_CONCURRENCY:
            return None
        return _claim(delivery.pk, claim, now)
    with transaction.atomic():
        Webhook.objects.select_for_update().filter(pk=delivery.webhook_id).values_list("pk").get()
        if in_flight.count() >= settings.WEBHOOK_ENDPOINT_CONCURRENCY:
            return None
        return _claim(delivery.pk, claim, now)


def _claim(delivery_id: int, claim: uuid.UUID, now: datetime) -> bool:
    """Take the attempt: one UPDATE whose conditions are on the row itself, so that of two workers racing
    for it exactly one matches (PostgreSQL rechecks them on the row the other committed)."""
    return bool(Delivery.objects.filter(pk=delivery_id, status__in=OPEN_STATUSES, next_attempt_at__lte=now)
                .filter(Q(claimed_at__isnull=True) | Q(claimed_at__lt=_lost_before(now)))
                .update(claimed_at=now, claim=claim))


def record(delivery: Delivery, exchange: Exchange, *, claim: uuid.UUID) -> Outcome:
    """Keep what the attempt brought and decide what follows: delivered, a retry on the schedule
    (WEBHOOK_RETRY_SCHEDULE), or failed once the schedule is spent."""
    now = timezone.now()
    outcome = outcome_of(exchange)
    WEBHOOK_DELIVERIES.labels(outcome.value).inc()
    attempts = delivery.attempts + 1
    schedule = settings.WEBHOOK_RETRY_SCHEDULE
    if outcome is Outcome.DELIVERED:
        after = {"status": DeliveryStatus.DELIVERED, "delivered_at": now, "next_attempt_at": None}
    elif attempts <= len(schedule):
        after = {"status": DeliveryStatus.RETRYING, "next_attempt_at": now + timedelta(seconds=schedule[attempts - 1]),
                 "dispatched_at": None}  # the sweep hands it out when due
    else:
        after = {"status": DeliveryStatus.FAILED, "next_attempt_at": None}
    Delivery.objects.filter(pk=delivery.pk, claim=claim).update(
        attempts=F("attempts") + 1, response_status=exchange.status, response_body=exchange.body,
        error=_error_of(exchange, outcome), duration_ms=exchange.duration_ms, claimed_at=None, claim=None, **after)
    health.note_endpoint_health(webhook=delivery.webhook, delivered=outcome is Outcome.DELIVERED, now=now)
    return outcome


def _error_of(exchange: Exchange, outcome: Outcome) -> str:
    if outcome is Outcome.REJECTED:
        redirect = " (redirects are not followed)" if 300 <= exchange.status < 400 else ""
        return f"answered {exchange.status}{redirect}"
    return exchange.error


def sweep(*, queue_is_empty: bool, now: datetime | None = None) -> list[int]:
    """The periodic pass: disable endpoints that have failed for too long, and take the deliveries due for a
    hand-out: retries whose time has come, those claimed by a worker that died (a claim older than
    WEBHOOK_LOST_AFTER_SECONDS), and, once the queue of hand-outs is empty, those handed out that long ago and
    never claimed (lost with a worker, or never handed out after their commit). While a backlog waits in the
    queue a late claim is no sign of loss: handing those out again would only lengthen it. Answers the ids
    taken, marked handed out."""
    now = now or timezone.now()
    health.disable_failing_webhooks(now=now)
    lost_before = _lost_before(now)
    unclaimed = Q(dispatched_at__isnull=True) | Q(claimed_at__lt=lost_before)
    if queue_is_empty:
        unclaimed |= Q(dispatched_at__lt=lost_before, claimed_at__isnull=True)
    with transaction.atomic():
        due = list(Delivery.objects.filter(unclaimed, status__in=OPEN_STATUSES, next_attempt_at__lte=now)
                   .order_by("next_attempt_at").select_for_update(skip_locked=True)
                   .values_list("pk", flat=True)[:SWEEP_BATCH])
        Delivery.objects.filter(pk__in=due).update(dispatched_at=now)
    if due:
        logger.info("webhook sweep hands out %d deliveries", len(due))
    return due
