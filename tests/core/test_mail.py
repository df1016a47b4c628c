"""The e-mail outbox (core/mail.py, core/mailer.py) against a real SMTP server on loopback (tests/mail.py): sent
after the write commits, off its path; an SMTP server that is down or hangs delays nothing, and what it did not
take is retried by the sweep, then given up."""

import logging
import time
from datetime import timedelta

import pytest
from django.core.mail import BadHeaderError
from django.db import transaction
from django.utils import timezone
from prometheus_client import REGISTRY

from config.settings import email_backend
from core import tasks
from core.mail import queue_email, site_url
from core.models import OutboundEmail
from tests.polling import eventually
from tests.realtime.servers import free_port

from ..mail import SilentServer, html_of, text_of


def sent_count(kind: str, outcome: str) -> float:
    return REGISTRY.get_sample_value("tracker_emails_total", {"kind": kind, "outcome": outcome}) or 0.0


def queued(**fields) -> OutboundEmail:
    """queue_email in a transaction of its own, as a write does; the e-mail it stored."""
    with transaction.atomic():
        queue_email(**{"kind": "test", "to": "ada@example.com", "subject": "Hello", "text": "Body", **fields})
    return OutboundEmail.objects.latest("pk")


def attempted(email: OutboundEmail, attempts: int) -> OutboundEmail:
    """The e-mail once its `attempts`-th attempt is recorded."""
    assert eventually(lambda: OutboundEmail.objects.filter(pk=email.pk, attempts=attempts, claimed_at=None).exists())
    return OutboundEmail.objects.get(pk=email.pk)


def test_an_email_is_sent_after_its_transaction_commits(smtp_server, settings):
    settings.DEFAULT_FROM_EMAIL = "tracker@example.org"
    settings.SITE_URL = "https://tracker.example.org"
    before = sent_count("test", "sent")
    email = queued(subject="Hello", text="Plain body", html="<p>HTML body</p>",
                   headers={"Auto-Submitted": "auto-generated", "In-Reply-To": "<ticket-7@tracker.example.org>"})

    [message] = smtp_server.wait_for(1)
    assert (message["From"], message["To"], message["Subject"]) == ("tracker@example.org", "ada@example.com", "Hello")
    assert (message["Auto-Submitted"], message["In-Reply-To"]) == ("auto-generated", "<ticket-7@tracker.example.org>")
    assert message["Message-ID"].endswith("@tracker.example.org>")
    assert (text_of(message).strip(), html_of(message).strip()) == ("Plain body", "<p>HTML body</p>")
    assert smtp_server.envelopes == [("tracker@example.org", ["ada@example.com"])]
    assert attempted(email, 1).status == OutboundEmail.Status.SENT
    assert sent_count("test", "sent") == before + 1


def test_a_text_only_email_has_one_part(smtp_server):
    queued(text="Only text")
    [message] = smtp_server.wait_for(1)
    assert (message.get_content_type(), message.get_content().strip()) == ("text/plain", "Only text")


def test_nothing_is_sent_for_a_write_that_rolls_back(smtp_server):
    with pytest.raises(RuntimeError), transaction.atomic():
        queue_email(kind="test", to="ada@example.com", subject="Rolled back", text="x")
        raise RuntimeError("the write fails")
    queued(subject="Committed")
    assert [message["Subject"] for message in smtp_server.wait_for(1)] == ["Committed"]
    assert list(OutboundEmail.objects.values_list("subject", flat=True)) == ["Committed"]


def test_user_text_cannot_add_headers(smtp_server):
    queued(subject="Title\r\nBcc: eve@example.com\nX-Injected: yes", text="Body\r\nBcc: eve@example.com")
    [message] = smtp_server.wait_for(1)
    assert message["Subject"] == "Title Bcc: eve@example.com X-Injected: yes"
    assert (message["Bcc"], message["X-Injected"]) == (None, None)
    assert smtp_server.envelopes[0][1] == ["ada@example.com"]


def test_a_non_ascii_subject_arrives_intact(smtp_server):
    queued(subject="Überprüfung — 検査 ✓")
    [message] = smtp_server.wait_for(1)
    assert message["Subject"] == "Überprüfung — 検査 ✓"


@pytest.mark.parametrize("headers, to", [({"References": "<a@b>\r\nBcc: eve@example.com"}, "ada@example.com"),
                                         ({}, "ada@example.com\nBcc: eve@example.com")])
def test_a_header_with_a_line_break_is_refused_and_nothing_is_stored(db, headers, to):
    with pytest.raises(BadHeaderError):
        queue_email(kind="test", to=to, subject="Hello", text="Body", headers=headers)
    assert not OutboundEmail.objects.exists()


def test_an_smtp_server_that_is_down_is_retried_later_and_the_email_delivered(smtp_server, settings):
    settings.EMAIL_PORT = free_port()  # nothing listens there
    before = sent_count("test", "retried")
    started = timezone.now()
    email = attempted(queued(subject="Eventually"), 1)
    assert (email.status, email.error.split(":")[0]) == (OutboundEmail.Status.PENDING, "ConnectionRefusedError")
    assert started + timedelta(seconds=60) <= email.next_attempt_at <= timezone.now() + timedelta(seconds=60)
    assert sent_count("test", "retried") == before + 1

    settings.EMAIL_PORT = smtp_server.port  # the server is back
    tasks.sweep_emails()
    assert not smtp_server.messages, "not before its retry is due"
    OutboundEmail.objects.filter(pk=email.pk).update(next_attempt_at=timezone.now())  # a minute has passed
    tasks.sweep_emails()
    assert [message["Subject"] for message in smtp_server.wait_for(1)] == ["Eventually"]
    assert attempted(email, 2).status == OutboundEmail.Status.SENT


def test_an_email_is_given_up_after_its_last_retry(smtp_server, settings, caplog):
    settings.EMAIL_PORT = free_port()
    settings.EMAIL_RETRY_SCHEDULE = [0, 0]
    before = sent_count("test", "failed")
    email = attempted(queued(), 1)
    for attempts in (2, 3):
        with caplog.at_level(logging.WARNING, logger="core.mailer"):
            tasks.sweep_emails()
            email = attempted(email, attempts)
    assert email.status == OutboundEmail.Status.FAILED
    assert sent_count("test", "failed") == before + 1
    assert f"e-mail {email.pk} (test) to ada@example.com given up after 3 attempts" in caplog.text

    settings.EMAIL_PORT = smtp_server.port
    tasks.sweep_emails()
    queued(subject="Next")
    assert [message["Subject"] for message in smtp_server.wait_for(1)] == ["Next"]


def test_an_smtp_server_that_hangs_delays_no_write(smtp_server, settings):
    settings.EMAIL_TIMEOUT = 1
    with SilentServer() as silent:
        settings.EMAIL_PORT = silent.port
        started = time.monotonic()
        email = queued()
        assert time.monotonic() - started < 0.5
        email = attempted(email, 1)
    assert (email.status, email.error.endswith("timed out")) == (OutboundEmail.Status.PENDING, True)


def test_an_email_whose_hand_out_was_lost_is_sent_by_the_sweep(smtp_server):
    """Its process died between the commit and the hand-out, or while sending (claimed, never recorded)."""
    long_ago = timezone.now() - timedelta(hours=1)
    fields = {"kind": "test", "to": "ada@example.com", "text": "x", "created_at": long_ago,
              "next_attempt_at": long_ago}
    OutboundEmail.objects.create(subject="Never handed out", **fields)
    OutboundEmail.objects.create(subject="Sender died", claimed_at=long_ago, **fields)
    tasks.sweep_emails()
    assert sorted(message["Subject"] for message in smtp_server.wait_for(2)) == ["Never handed out", "Sender died"]


def test_an_email_is_sent_once_however_often_it_is_handed_out(smtp_server):
    email = queued()
    smtp_server.wait_for(1)
    attempted(email, 1)
    tasks.send_emails([email.pk, email.pk])
    tasks.sweep_emails()
    queued(subject="Next")
    assert [message["Subject"] for message in smtp_server.wait_for(2)] == ["Hello", "Next"]


def test_the_sweep_removes_old_sent_and_failed_emails_and_keeps_pending_ones(transactional_db, settings):
    settings.CELERY_BROKER_URL = ""
    long_ago = timezone.now() - timedelta(days=settings.EMAIL_RETENTION_DAYS, seconds=1)
    for status in OutboundEmail.Status:
        OutboundEmail.objects.create(kind="test", to="ada@example.com", subject=status, text="x", status=status,
                                     created_at=long_ago, next_attempt_at=timezone.now() + timedelta(hours=1))
    OutboundEmail.objects.create(kind="test", to="ada@example.com", subject="recent", text="x", status="sent",
                                 created_at=timezone.now(), next_attempt_at=timezone.now())
    tasks.sweep_emails()
    assert sorted(OutboundEmail.objects.values_list("subject", flat=True)) == ["pending", "recent"]


def test_without_an_smtp_host_emails_are_printed_on_the_console(transactional_db, settings, capsys):
    settings.EMAIL_BACKEND = email_backend("")
    settings.CELERY_BROKER_URL = ""
    queued(subject="On the console", text="Printed body")
    assert eventually(lambda: OutboundEmail.objects.filter(status="sent").exists())
    printed = capsys.readouterr().out
    assert "Subject: On the console" in printed and "Printed body" in printed


def test_an_smtp_host_selects_the_smtp_backend():
    assert email_backend("smtp.example.org") == "django.core.mail.backends.smtp.EmailBackend"


def test_site_url_joins_the_path_to_the_configured_base(settings):
    settings.SITE_URL = "https://tracker.example.org"
    assert site_url("/projects/3/board/?ticket=7") == "https://tracker.example.org/projects/3/board/?ticket=7"


def test_a_burst_is_sent_once_each_by_senders_side_by_side(smtp_server):
    with transaction.atomic():
        for number in range(30):
            queue_email(kind="test", to=f"reader{number}@example.com", subject=f"Message {number}", text="x")
    assert sorted(message["Subject"] for message in smtp_server.wait_for(30)) == sorted(
        f"Message {number}" for number in range(30))
    assert eventually(lambda: set(OutboundEmail.objects.values_list("status", "attempts")) == {("sent", 1)})
    tasks.sweep_emails()
    queued(subject="Next")
    assert smtp_server.wait_for(31)[-1]["Subject"] == "Next"
