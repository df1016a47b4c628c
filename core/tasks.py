"""The background tasks of e-mail (core/mail.py queues, core/mailer.py sends): they carry e-mail ids only, the
outbox's rows hold the rest."""

from celery import shared_task
from django.utils import timezone

from core import background

from . import mailer

# Ids per task: a backlog is shared out between the workers.
HAND_OUT_BATCH = 100


@shared_task(name="core.tasks.send_emails", ignore_result=True)
def send_emails(email_ids: list[int]) -> None:
    mailer.send(email_ids)


@shared_task(name="core.tasks.sweep_emails", ignore_result=True)
def sweep_emails() -> None:
    """BACKGROUND_SCHEDULE, every EMAIL_SWEEP_SECONDS: due retries and lost hand-outs are handed out again (several
    sweeps at once send nothing twice: the senders claim), and old sent or failed e-mails are removed."""
    now = timezone.now()
    email_ids = mailer.due(now=now)
    for start in range(0, len(email_ids), HAND_OUT_BATCH):
        background.run_soon(send_emails, email_ids[start:start + HAND_OUT_BATCH])
    mailer.prune(now=now)
