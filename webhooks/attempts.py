"""The database side of sending deliveries, a batch at a time: what the sender (webhooks/sender.py) claims before
it sends, what it records after, and the periodic sweep.

Each step is a few statements for the whole batch, whatever its size: building the same few statements again
per delivery was most of what a delivery cost. A sender claims attempts with one conditional UPDATE before it
sends them, so several senders never send one attempt twice; only a process that dies between sending and
recording leaves an attempt to be sent again (at least once), after WEBHOOK_LOST_AFTER_SECONDS.
"""

import logging
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

import orjson
from cryptography.fernet import InvalidToken
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, F, Min, Q, Subquery, Window
from django.db.models.functions import RowNumber
from django.utils import timezone

from core.metrics import WEBHOOK_BACKLOG, WEBHOOK_BACKLOG_OLDEST, WEBHOOK_DELIVERIES

from . import health, keys, signing
from .delivery import Exchange, Failure
from .models import OPEN_STATUSES, Delivery, DeliveryStatus, Webhook

logger = logging.getLogger(__name__)

SWEEP_BATCH = 1000
# Retries one endpoint gets from one sweep at most: an endpoint with a backlog of thousands takes its turn
# beside the others instead of filling the sweep's batch (its sender holds what it was given until it can send).
SWEEP_PER_ENDPOINT = 100
PRUNE_BATCH = 1000
UNREADABLE_SECRET = "not sent: the signing secret cannot be read with this DJANGO_SECRET_KEY; rotate it"
INACTIVE = "the webhook was switched off before this attempt"


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


@dataclass(frozen=True)
class Queued:
    """A delivery handed to a sender, with what it needs to queue it behind its endpoint."""

    delivery_id: int
    webhook_id: int
    project_id: int


def queued(delivery_ids: list[int]) -> list[Queued]:
    """The open deliveries among `delivery_ids` (done or deleted ones drop out), in the order given."""
    rows = dict((pk, (webhook_id, project_id)) for pk, webhook_id, project_id in Delivery.objects.filter(
        pk__in=delivery_ids, status__in=OPEN_STATUSES).values_list("pk", "webhook_id", "webhook__project_id"))
    return [Queued(pk, *rows[pk]) for pk in dict.fromkeys(delivery_ids) if pk in rows]


def claim(delivery_ids: list[int], *, now: datetime) -> list[Delivery]:
    """Take the attempts that are due and that no other sender holds, with their webhooks: one UPDATE whose
    conditions are on the rows themselves, so that of two senders racing for a row exactly one matches
    (PostgreSQL rechecks them on the row the other committed), then one read of what was taken."""
    batch = uuid.uuid4()
    Delivery.objects.filter(pk__in=delivery_ids, status__in=OPEN_STATUSES, next_attempt_at__lte=now).filter(
        Q(claimed_at__isnull=True) | Q(claimed_at__lt=_lost_before(now))).update(claimed_at=now, claim=batch)
    return list(Delivery.objects.select_related("webhook").filter(pk__in=delivery_ids, claim=batch).only(
        "message_id", "payload", "attempts", "claim", "original_id", "webhook__url", "webhook__secret",
        "webhook__previous_secret", "webhook__previous_secret_expires_at", "webhook__active",
        "webhook__failing_since", "webhook__project_id"))


def message(delivery: Delivery, now: datetime) -> tuple[bytes, dict[str, str]]:
    """The body (the frame as JSON) and the Standard Webhooks headers of this attempt; InvalidToken when the
    secret was sealed under another DJANGO_SECRET_KEY."""
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


def record(attempts: list[tuple[Delivery, Exchange]]) -> list[Outcome]:
    """Keep what each attempt brought and decide what follows: delivered (which settles the message's other
    deliveries), a retry on the schedule (WEBHOOK_RETRY_SCHEDULE), or failed once the schedule is spent; then
    each endpoint's health. A row whose claim is gone (deleted, or settled meanwhile) is left alone."""
    now = timezone.now()
    outcomes = [outcome_of(exchange) for _, exchange in attempts]
    rows = [_recorded_row(delivery, exchange, outcome, now) for (delivery, exchange), outcome in zip(
        attempts, outcomes, strict=True)]
    delivered = [delivery for (delivery, _), outcome in zip(attempts, outcomes, strict=True)
                 if outcome is Outcome.DELIVERED]
    last_outcome = {delivery.webhook_id: (delivery.webhook, outcome)
                    for (delivery, _), outcome in zip(attempts, outcomes, strict=True)}
    with transaction.atomic():  # one commit for the batch
        with connection.cursor() as cursor:
            cursor.executemany(_record_statement(), rows)
        _settle_copies(delivered, now)
        health.note_endpoints_health(
            delivered=[webhook for webhook, outcome in last_outcome.values() if outcome is Outcome.DELIVERED],
            failed=[webhook for webhook, outcome in last_outcome.values() if outcome is not Outcome.DELIVERED],
            now=now)
    for outcome in outcomes:
        WEBHOOK_DELIVERIES.labels(outcome.value).inc()
    return outcomes


def _recorded_row(delivery: Delivery, exchange: Exchange, outcome: Outcome, now: datetime) -> list:
    attempts = delivery.attempts + 1
    schedule = settings.WEBHOOK_RETRY_SCHEDULE
    status, next_attempt_at, delivered_at = DeliveryStatus.FAILED, None, None
    if outcome is Outcome.DELIVERED:
        status, delivered_at = DeliveryStatus.DELIVERED, now
    elif attempts <= len(schedule):
        status, next_attempt_at = DeliveryStatus.RETRYING, now + timedelta(seconds=schedule[attempts - 1])
    return [status.value, exchange.status, exchange.body, _error_of(exchange, outcome), exchange.duration_ms,
            _stored("next_attempt_at", next_attempt_at), _stored("delivered_at", delivered_at), delivery.pk,
            _stored("claim", delivery.claim)]


def _record_statement() -> str:
    """One UPDATE per attempt, the same text for all (the driver sends them together). The retry's hand-out is
    the sweep's once it is due (dispatched_at cleared)."""
    table, column = _table_and_columns()
    assigned = ", ".join(f"{column[name]} = %s" for name in (
        "status", "response_status", "response_body", "error", "duration_ms", "next_attempt_at", "delivered_at"))
    return (f"UPDATE {table} SET {assigned}, {column['attempts']} = {column['attempts']} + 1, "
            f"{column['dispatched_at']} = NULL, {column['claimed_at']} = NULL, {column['claim']} = NULL "
            f"WHERE {column['id']} = %s AND {column['claim']} = %s")


def _table_and_columns() -> tuple[str, dict[str, str]]:
    meta, quote = Delivery._meta, connection.ops.quote_name
    return quote(meta.db_table), {field.name: quote(field.column) for field in meta.concrete_fields}


def _stored(field_name: str, value):
    """`value` as the model's field writes it on this database (a timestamp, a UUID)."""
    return Delivery._meta.get_field(field_name).get_db_prep_save(value, connection)


def _error_of(exchange: Exchange, outcome: Outcome) -> str:
    if outcome is Outcome.REJECTED:
        redirect = " (redirects are not followed)" if 300 <= exchange.status < 400 else ""
        return f"answered {exchange.status}{redirect}"
    return exchange.error


def _settle_copies(delivered: list[Delivery], now: datetime) -> None:
    """A message delivered once needs no more attempts: its other deliveries to the endpoint (the original and
    its redeliveries), waiting or failed, are marked delivered, and a copy in flight finds its claim gone and
    records nothing."""
    if not delivered:
        return
    roots = {delivery.original_id or delivery.pk for delivery in delivered}
    (Delivery.objects.filter(Q(pk__in=roots) | Q(original_id__in=roots)).exclude(status=DeliveryStatus.DELIVERED)
     .exclude(pk__in=[delivery.pk for delivery in delivered])
     .update(status=DeliveryStatus.DELIVERED, delivered_at=now, next_attempt_at=None, error="", claimed_at=None,
             claim=None))


def fail_inactive(deliveries: list[Delivery]) -> None:
    """Claimed deliveries whose webhook was switched off meanwhile: failed, without an attempt."""
    Delivery.objects.filter(pk__in=[delivery.pk for delivery in deliveries]).update(
        status=DeliveryStatus.FAILED, next_attempt_at=None, error=INACTIVE, claimed_at=None, claim=None)


def renew_hand_outs(delivery_ids: list[int], *, now: datetime) -> None:
    """The deliveries a sender holds waiting for their endpoint are still in hand, not lost."""
    Delivery.objects.filter(pk__in=delivery_ids, claimed_at__isnull=True).update(dispatched_at=now)


def sweep(*, queue_is_empty: bool, now: datetime | None = None) -> list[int]:
    """The periodic pass: disable endpoints that have failed for too long, prune old deliveries, update the
    backlog's gauges, and take the deliveries due for a hand-out: retries whose time has come, those claimed by a
    process that died (a claim older than WEBHOOK_LOST_AFTER_SECONDS), and, once the queue of hand-outs is
    empty, those handed out that long ago and never claimed (lost with a process, or never handed out after
    their commit; a sender renews what it holds). While a backlog waits in the queue a late claim is no sign of
    loss: handing those out again would only lengthen it. At most SWEEP_PER_ENDPOINT per endpoint, so that each
    endpoint's due retries take their turn. Answers the ids taken, marked handed out."""
    now = now or timezone.now()
    health.disable_failing_webhooks(now=now)
    prune(now=now)
    measure_backlog(now=now)
    lost_before = _lost_before(now)
    unclaimed = Q(dispatched_at__isnull=True) | Q(claimed_at__lt=lost_before)
    if queue_is_empty:
        unclaimed |= Q(dispatched_at__lt=lost_before, claimed_at__isnull=True)
    each_endpoint_s_first = (
        Delivery.objects.filter(unclaimed, status__in=OPEN_STATUSES, next_attempt_at__lte=now)
        .annotate(turn=Window(RowNumber(), partition_by=F("webhook_id"), order_by=F("next_attempt_at").asc()))
        .filter(turn__lte=SWEEP_PER_ENDPOINT).values("pk"))
    with transaction.atomic():
        due = list(Delivery.objects.filter(pk__in=Subquery(each_endpoint_s_first)).filter(unclaimed)
                   .order_by("next_attempt_at").select_for_update(skip_locked=True)
                   .values_list("pk", flat=True)[:SWEEP_BATCH])
        Delivery.objects.filter(pk__in=due).update(dispatched_at=now)
    if due:
        logger.debug("webhook sweep hands out %d deliveries", len(due))
    return due


def prune(*, now: datetime) -> int:
    """Remove one batch of the finished deliveries older than WEBHOOK_DELIVERY_RETENTION_DAYS (the sweep runs
    often: a backlog of old rows goes a batch a run, never in one long statement)."""
    cutoff = now - timedelta(days=settings.WEBHOOK_DELIVERY_RETENTION_DAYS)
    old = list(Delivery.objects.filter(created_at__lt=cutoff).exclude(status__in=OPEN_STATUSES)
               .order_by("created_at").values_list("pk", flat=True)[:PRUNE_BATCH])
    return Delivery.objects.filter(pk__in=old).delete()[0] if old else 0


def measure_backlog(*, now: datetime) -> None:
    """tracker_webhook_backlog: the open deliveries; and how long the oldest of them has waited."""
    backlog = Delivery.objects.filter(status__in=OPEN_STATUSES).aggregate(open=Count("pk"), oldest=Min("created_at"))
    WEBHOOK_BACKLOG.set(backlog["open"])
    WEBHOOK_BACKLOG_OLDEST.set((now - backlog["oldest"]).total_seconds() if backlog["oldest"] else 0)
