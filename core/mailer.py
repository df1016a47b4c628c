"""The sending side of the outbox (core/mail.py queues): claim due e-mails, send them over one SMTP connection,
record each attempt; and the sweep's part (due retries, hand-outs lost with a process, pruning).

A sender claims e-mails with one conditional UPDATE before it sends them, so several workers never send one twice;
only a process that dies between sending and recording leaves an e-mail to be sent again (at least once), after
EMAIL_LOST_AFTER_SECONDS. An SMTP error (refused connection, timeout, a 4xx or 5xx answer) is retried after each
delay of EMAIL_RETRY_SCHEDULE, then the e-mail is given up (`failed`, logged).
"""

import logging
import smtplib
from datetime import datetime, timedelta
from enum import StrEnum

from django.conf import settings
from django.core.mail import EmailMultiAlternatives, get_connection
from django.core.mail.backends.base import BaseEmailBackend
from django.db.models import F, Q
from django.utils import timezone

from .metrics import EMAILS
from .models import OutboundEmail

logger = logging.getLogger(__name__)

SWEEP_BATCH = 1000
SEND_BATCH = 100  # e-mails one sender claims at once, over one connection
PRUNE_BATCH = 1000


class Outcome(StrEnum):
    """What one attempt came to (the `outcome` of tracker_emails_total)."""

    SENT = "sent"
    RETRIED = "retried"  # an SMTP error; tried again after the next delay of EMAIL_RETRY_SCHEDULE
    FAILED = "failed"  # an SMTP error after the last retry: given up


def send(email_ids: list[int]) -> None:
    """Send those of these e-mails that are due and not held by another sender, with other fresh ones waiting for
    their hand-out (a burst goes over few connections: the later hand-outs then find theirs sent), over one
    connection."""
    emails = claim(email_ids, now=timezone.now())
    if not emails:
        return
    connection = get_connection()
    sent = []
    try:
        for email in emails:
            error = attempt(connection, email)
            if error is None:
                sent.append(email)
            else:
                record_failure(email, error)
    finally:
        _close(connection)
        record_sent(sent)


def claim(email_ids: list[int], *, now: datetime) -> list[OutboundEmail]:
    """These e-mails, and up to SEND_BATCH in all with fresh ones waiting for their hand-out, claimed at `now`
    with one conditional UPDATE (a sender that claims one first keeps it)."""
    fresh = (OutboundEmail.objects.filter(status=OutboundEmail.Status.PENDING, attempts=0, claimed_at__isnull=True,
                                          next_attempt_at__lte=now).exclude(pk__in=email_ids)
             .order_by("pk").values("pk")[:max(SEND_BATCH - len(email_ids), 0)])
    claimable = OutboundEmail.objects.filter(Q(pk__in=email_ids) | Q(pk__in=fresh), status=OutboundEmail.Status.PENDING,
                                             next_attempt_at__lte=now).filter(
        Q(claimed_at__isnull=True) | Q(claimed_at__lt=_lost_before(now)))
    if not claimable.update(claimed_at=now):
        return []
    return list(OutboundEmail.objects.filter(claimed_at=now).order_by("pk"))


def message_of(email: OutboundEmail, connection: BaseEmailBackend) -> EmailMultiAlternatives:
    message = EmailMultiAlternatives(email.subject, email.text, settings.DEFAULT_FROM_EMAIL, [email.to],
                                     headers=email.headers, connection=connection)
    if email.html:
        message.attach_alternative(email.html, "text/html")
    return message


def attempt(connection: BaseEmailBackend, email: OutboundEmail) -> str | None:
    """Send one e-mail: None once the server took it, else the error. A failed connection is closed, so that
    the next e-mail of the batch opens a new one."""
    try:
        connection.open()
        message_of(email, connection).send()
    except (smtplib.SMTPException, OSError) as error:
        _close(connection)
        return f"{type(error).__name__}: {error}"[:1000]
    return None


def record_sent(emails: list[OutboundEmail]) -> None:
    """In one UPDATE; each as this sender claimed it (one whose claim lapsed and went to another is that one's)."""
    OutboundEmail.objects.filter(pk__in=[email.pk for email in emails],
                                 claimed_at__in={email.claimed_at for email in emails}).update(
        status=OutboundEmail.Status.SENT, sent_at=timezone.now(), attempts=F("attempts") + 1, claimed_at=None,
        error="")
    for email in emails:
        EMAILS.labels(email.kind, Outcome.SENT).inc()


def record_failure(email: OutboundEmail, error: str) -> None:
    """Retried after the next delay of EMAIL_RETRY_SCHEDULE, or given up after the last."""
    attempts = email.attempts + 1
    if attempts > len(settings.EMAIL_RETRY_SCHEDULE):
        outcome, changes = Outcome.FAILED, {"status": OutboundEmail.Status.FAILED}
        logger.warning("e-mail %s (%s) to %s given up after %s attempts: %s", email.pk, email.kind, email.to,
                       attempts, error)
    else:
        delay = settings.EMAIL_RETRY_SCHEDULE[attempts - 1]
        outcome, changes = Outcome.RETRIED, {"next_attempt_at": timezone.now() + timedelta(seconds=delay)}
        logger.info("e-mail %s (%s) to %s not sent, retried in %s s: %s", email.pk, email.kind, email.to, delay,
                    error)
    OutboundEmail.objects.filter(pk=email.pk, claimed_at=email.claimed_at).update(
        attempts=attempts, claimed_at=None, error=error, **changes)
    EMAILS.labels(email.kind, outcome).inc()


def due(*, now: datetime) -> list[int]:
    """The pending e-mails the sweep hands out: retries now due, and those whose hand-out or sender was lost
    (queued or claimed over EMAIL_LOST_AFTER_SECONDS ago). A fresh e-mail is its own hand-out's, not the sweep's."""
    lost_before = _lost_before(now)
    waiting = Q(claimed_at__isnull=True) & (Q(attempts__gt=0) | Q(created_at__lt=lost_before))
    return list(OutboundEmail.objects.filter(waiting | Q(claimed_at__lt=lost_before),
                                             status=OutboundEmail.Status.PENDING, next_attempt_at__lte=now)
                .order_by("next_attempt_at").values_list("pk", flat=True)[:SWEEP_BATCH])


def prune(*, now: datetime) -> int:
    """Remove sent and failed e-mails older than EMAIL_RETENTION_DAYS, a batch at a time."""
    old = OutboundEmail.objects.filter(created_at__lt=now - timedelta(days=settings.EMAIL_RETENTION_DAYS)).exclude(
        status=OutboundEmail.Status.PENDING)
    return OutboundEmail.objects.filter(pk__in=list(old.values_list("pk", flat=True)[:PRUNE_BATCH])).delete()[0]


def _lost_before(now: datetime) -> datetime:
    return now - timedelta(seconds=settings.EMAIL_LOST_AFTER_SECONDS)


def _close(connection: BaseEmailBackend) -> None:
    try:
        connection.close()
    except (smtplib.SMTPException, OSError):  # a connection that broke cannot say goodbye
        pass
