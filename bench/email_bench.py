"""E-mail (issue 34): what e-mail adds to a notifying write, and how many e-mails one Procfile worker process sends
per second to a local SMTP server (aiosmtpd, in a process of its own, keeping nothing).

The write's figure is a comment telling the ticket's assignee, timed in turns on two tickets whose assignee wants
e-mail (`instant`) or not (`off`): the e-mail's part of the write is its notification row's two columns; its
batching and sending are the sweep's and the workers' work, off the request path. The sending figure queues a burst
of e-mails in one transaction and times its commit → the last one sent, by the worker (Celery on Redis; in
BENCH_SMALL, the process's own runner on SQLite).
"""

import os
import socket
import subprocess
import sys
import time

from bench.figures import REDIS_URL, SMALL, paired_p50, ratio, setup, tune_for_serving
from bench.webhooks_bench import Worker


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class SmtpSink:
    """aiosmtpd's Sink handler (takes every message, keeps none) on a loopback port, in a process of its own."""

    def __init__(self):
        self.port = free_port()

    def __enter__(self) -> "SmtpSink":
        self.process = subprocess.Popen([sys.executable, "-m", "aiosmtpd", "-n", "-l", f"127.0.0.1:{self.port}",
                                         "-c", "aiosmtpd.handlers.Sink"], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                assert self.process.poll() is None and time.monotonic() < deadline, "aiosmtpd did not start"
                time.sleep(0.05)

    def __exit__(self, *exc_info) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def emails() -> dict:
    with SmtpSink() as sink:
        redis_url = "" if SMALL else REDIS_URL
        os.environ.update({"REDIS_URL": redis_url, "CELERY_BROKER_URL": redis_url, "EMAIL_HOST": "127.0.0.1",
                           "EMAIL_PORT": str(sink.port)})
        setup("emails")
        writes = write_cost(runs=10 if SMALL else 150)
        sending = sending_rate(count=40 if SMALL else 3000, redis_url=redis_url)
    return {"figure": "a notifying write (a comment) whose recipient wants e-mail ÷ one whose recipient does not",
            "value": f"{ratio(writes['on'], writes['off'])}×; {sending['per_second']:.0f} e-mails/s sent by one "
                     "worker process",
            "goal": "within 5% (≤ 1.05×)",
            "baseline": f"e-mail off: {writes['off']:.1f} ms p50 (on: {writes['on']:.1f} ms)",
            "details": f"comments through the HTTP stack, in turns; the e-mail's batching and sending are off the "
                       f"request path. Sending: {sending['count']:,} e-mails committed at once, commit → the last "
                       f"accepted by aiosmtpd (Sink) in {sending['seconds']:.1f} s, by "
                       f"{'this process’s runner (SQLite)' if SMALL else 'the Procfile worker (4 threads, Redis)'}"}


def write_cost(*, runs: int) -> dict[str, float]:
    from django.test import Client

    from accounts.models import EmailNotifications, User
    from accounts.services import issue_token
    from projects.models import Project
    from projects.services import create_project, set_member_role
    from tickets.models import Ticket

    owner, _ = User.objects.get_or_create(username="bench-mail-owner")
    Project.objects.filter(name="E-mail").delete()
    project = create_project(owner=owner, name="E-mail", prefix="EM")
    tickets = {}
    for wants in ("on", "off"):
        user, _ = User.objects.update_or_create(username=f"bench-mail-{wants}", defaults={
            "email": f"{wants}@example.com",
            "email_notifications": EmailNotifications.INSTANT if wants == "on" else EmailNotifications.OFF})
        set_member_role(project=project, user=user, role="editor")
        number = Project.objects.advance_counters(project.pk, last_ticket_number=1)["last_ticket_number"]
        tickets[wants] = Ticket.objects.create(project=project, number=number, title=f"E-mail {wants}",
                                               status=project.statuses.order_by("sort_order").first(),
                                               created_by=owner)
        tickets[wants].assignees.set([user])
    tune_for_serving()
    client = Client(HTTP_AUTHORIZATION=f"Bearer {issue_token(user=owner)[1]}")

    def comment(wants: str) -> None:
        url = f"/api/v1/projects/{project.pk}/tickets/{tickets[wants].number}/comments"
        response = client.post(url, {"comment": "Looks good to me"}, content_type="application/json")
        assert response.status_code == 201, response.content

    return paired_p50({wants: lambda wants=wants: comment(wants) for wants in ("on", "off")}, runs)


def sending_rate(*, count: int, redis_url: str) -> dict:
    from django.db import transaction

    from core import background
    from core.mail import queue_email
    from core.models import OutboundEmail

    OutboundEmail.objects.all().delete()
    env = {"DATABASE_URL": os.environ["DATABASE_URL"], "REDIS_URL": redis_url, "DATABASE_POOL_MAX_SIZE": "8"}
    worker = None if SMALL else Worker(env).__enter__()
    try:
        started = time.perf_counter()
        with transaction.atomic():
            for number in range(count):
                queue_email(kind="bench", to=f"reader{number}@example.com", subject=f"Message {number}",
                            text="A line of text.\n" * 20, html="<p>A line of text.</p>" * 20)
        deadline = time.monotonic() + 300
        while OutboundEmail.objects.filter(status=OutboundEmail.Status.SENT).count() < count:
            assert time.monotonic() < deadline, "the e-mails were not all sent in 5 minutes"
            time.sleep(0.05)
        seconds = time.perf_counter() - started
    finally:
        if worker is not None:
            worker.__exit__(None, None, None)
        background.stop_local_runner()
    return {"count": count, "seconds": seconds, "per_second": count / seconds}
