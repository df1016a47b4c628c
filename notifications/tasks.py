"""The background task of notification e-mails (notifications/emails.py)."""

from celery import shared_task
from django.utils import timezone

from . import emails


@shared_task(name="notifications.tasks.send_emails", ignore_result=True)
def send_emails() -> None:
    """BACKGROUND_SCHEDULE, every EMAIL_NOTIFICATION_SWEEP_SECONDS: the e-mails whose batch, digest or hour has
    come are queued (core/mail.py sends them)."""
    emails.send_due(now=timezone.now())
