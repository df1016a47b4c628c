"""Notification e-mails (decisions.md "E-mail"): which notifications are e-mailed, and when.

`notify` (rules.py) asks `email_fields` what each row it writes says of its e-mail: `pending` (with the comment's
text it quotes) for a recipient with an address, active, who wants e-mail (read with the members, in the same
statement), so that e-mail costs a notifying write no statement of its own. The periodic `send_due`
(notifications.tasks.send_emails, every EMAIL_NOTIFICATION_SWEEP_SECONDS) turns the rows whose time has come into
e-mails (core.mail.queue_email) and clears their status, in one transaction, so that each is e-mailed once:
- `instant`: a recipient's notifications about one ticket within EMAIL_BATCH_SECONDS of the first, once that
  first is EMAIL_BATCH_SECONDS old, as one e-mail;
- `digest`: everything that arrived before the day's EMAIL_DIGEST_HOUR (UTC), as one e-mail, once it has struck;
- a recipient who had EMAIL_MAX_PER_USER_PER_HOUR notification e-mails this (clock) hour gets no more: the
  notifications that come due are `held`, and go as one e-mail in the next hour;
- a recipient who turned e-mails off, was deactivated, lost their address or left the project meanwhile, or whose
  ticket was deleted, gets nothing: those are cleared unsent.
"""

from collections import defaultdict
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Exists, OuterRef

from accounts.models import EmailNotifications
from core.mail import queue_email
from core.models import OutboundEmail
from projects.models import Membership

from .email_content import compose
from .models import EmailStatus, Notification, NotificationType

KIND, DIGEST_KIND = "notification", "digest"  # their label in tracker_emails_total
QUOTED_TYPES = {NotificationType.REACTION, NotificationType.MENTION}
QUOTE_LIMIT = 2000  # characters of a comment quoted in an e-mail
SWEEP_BATCH = 5000  # notifications one sweep reads at most; the next takes the rest


def wants_email(*, email: str, is_active: bool, email_notifications: str) -> bool:
    return bool(email) and is_active and email_notifications != EmailNotifications.OFF


def email_fields(member, type: NotificationType, *, quote: str) -> dict:
    """The e-mail columns of a new notification of `type` to `member` (a row of
    selectors.members_with_unread_counts): none for a member who gets no e-mail."""
    if not wants_email(email=member.email, is_active=member.is_active,
                       email_notifications=member.email_notifications):
        return {}
    quoted = quote if len(quote) <= QUOTE_LIMIT else f"{quote[:QUOTE_LIMIT]}…"
    return {"email_status": EmailStatus.PENDING, "email_quote": quoted if type in QUOTED_TYPES else ""}


def send_due(*, now: datetime) -> None:
    """Queue the e-mails whose time has come at `now`, and clear the notifications nobody is to receive."""
    if not Notification.objects.exclude(email_status="").exists():  # the usual answer: no transaction, no lock
        return
    with transaction.atomic():
        done, held = [], []
        by_user = defaultdict(list)
        for notification in _waiting(now):
            (by_user[notification.user_id] if _deliverable(notification) else done).append(notification)
        room = _room_this_hour(by_user.values(), now)
        for notifications in by_user.values():
            user = notifications[0].user
            if user.email_notifications == EmailNotifications.DIGEST:
                _queue(user, notifications, digest=True)
                done += notifications
                continue
            for batch in _instant_batches(notifications, now):
                if room[user.email] > 0:
                    _queue(user, batch)
                    done += batch
                    room[user.email] -= 1
                else:
                    held += [notification for notification in batch if notification.email_status != EmailStatus.HELD]
        Notification.objects.filter(pk__in=[notification.pk for notification in done]).update(email_status="")
        Notification.objects.filter(pk__in=[notification.pk for notification in held]).update(
            email_status=EmailStatus.HELD)


def digest_time(now: datetime) -> datetime:
    """The latest EMAIL_DIGEST_HOUR (UTC) at or before `now`."""
    today = now.astimezone(UTC).replace(hour=settings.EMAIL_DIGEST_HOUR, minute=0, second=0,
                                                 microsecond=0)
    return today if today <= now else today - timedelta(days=1)


def _waiting(now: datetime) -> list[Notification]:
    """Every notification waiting for its e-mail (the batching picks what is due), but a digest's that arrived
    after its latest hour; with what the e-mail says and whether it is still to be sent. Locked (PostgreSQL) so
    that sweeps at once take each once."""
    digest_not_yet = {"user__email_notifications": EmailNotifications.DIGEST, "created_at__gte": digest_time(now)}
    return list(
        Notification.objects.exclude(email_status="").exclude(**digest_not_yet)
        .annotate(is_member=Exists(Membership.objects.filter(user_id=OuterRef("user_id"),
                                                             project_id=OuterRef("project_id"))))
        .select_related("user", "ticket__project")
        .select_for_update(skip_locked=True, of=("self",))
        .order_by("created_at", "pk")[:SWEEP_BATCH])


def _deliverable(notification: Notification) -> bool:
    user = notification.user
    return (wants_email(email=user.email, is_active=user.is_active, email_notifications=user.email_notifications)
            and notification.is_member and notification.ticket.deleted_at is None)


def _room_this_hour(recipients: Iterable[list[Notification]], now: datetime) -> dict[str, int]:
    """Notification e-mails each recipient may still get this clock hour, by address."""
    addresses = {notifications[0].user.email for notifications in recipients}
    sent = dict(OutboundEmail.objects.filter(kind=KIND, to__in=addresses,
                                             created_at__gte=now.replace(minute=0, second=0, microsecond=0))
                .values("to").annotate(count=Count("pk")).values_list("to", "count"))
    return {address: settings.EMAIL_MAX_PER_USER_PER_HOUR - sent.get(address, 0) for address in addresses}


def _instant_batches(notifications: list[Notification], now: datetime) -> list[list[Notification]]:
    """A recipient's e-mails due at `now`, oldest first: all their held notifications as one, then each ticket's
    within EMAIL_BATCH_SECONDS of the first of its batch, once that first is that old."""
    window = timedelta(seconds=settings.EMAIL_BATCH_SECONDS)
    held = [notification for notification in notifications if notification.email_status == EmailStatus.HELD]
    batches = [held] if held else []
    open_batches: dict[int, list[Notification]] = {}  # by ticket: the batch its next notification may join
    waiting: set[int] = set()  # tickets whose next batch is not due yet
    for notification in notifications:  # oldest first
        ticket_id = notification.ticket_id
        if notification.email_status == EmailStatus.HELD or ticket_id in waiting:
            continue
        batch = open_batches.get(ticket_id)
        if batch is not None and notification.created_at <= batch[0].created_at + window:
            batch.append(notification)
        elif notification.created_at <= now - window:
            open_batches[ticket_id] = [notification]
            batches.append(open_batches[ticket_id])
        else:
            waiting.add(ticket_id)
    return batches


def _queue(user, notifications: list[Notification], *, digest: bool = False) -> None:
    email = compose(user, notifications, digest=digest)
    queue_email(kind=DIGEST_KIND if digest else KIND, to=user.email, subject=email.subject, text=email.text,
                html=email.html, headers=email.headers)
