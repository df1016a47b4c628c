"""The Procfile's lines on PostgreSQL and Redis. Two web processes and two Celery workers: every event reaches
every endpoint exactly once; with a worker killed in the middle, every message still arrives, none more than twice.
One of each: 100 endpoints that hang delay no healthy endpoint's messages by a second."""

import os
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

from accounts.services import issue_token
from projects.models import Project, Tag
from tests.realtime.conftest import SEVERAL_PROCESSES
from tests.realtime.servers import ApiClient, served_database_url
from tests.security.procfile import ProcfileServer
from tickets.models import Ticket
from webhooks.models import Delivery

from .hung import hung_endpoints_delay_no_healthy_one
from .receivers import Receiver
from .workers import ProcfileWorker

pytestmark = SEVERAL_PROCESSES

ENDPOINTS = 5
EVENTS = 1000
# Each run deletes TAGS_PER_RUN tags, half through each web process, each tag on TICKETS_PER_TAG tickets: one
# deletion is one ticket.updated event per ticket and one tag.deleted, EVENTS in all.
TAGS_PER_RUN = 4
TICKETS_PER_TAG = EVENTS // TAGS_PER_RUN - 1


def tagged_tickets(project, runs: int) -> list[list[Tag]]:
    """TICKETS_PER_TAG × TAGS_PER_RUN tickets; for each run, TAGS_PER_RUN tags sharing them out."""
    status = project.statuses.order_by("sort_order").first()
    count = TICKETS_PER_TAG * TAGS_PER_RUN
    tickets = Ticket.objects.bulk_create(
        Ticket(project=project, number=n, title=f"Ticket {n}", status=status, created_by=project.owner, sort_order=n)
        for n in range(1, count + 1))
    Project.objects.filter(pk=project.pk).update(last_ticket_number=count)
    tags = [[Tag.objects.create(project=project, name=f"run{run}-{n}") for n in range(TAGS_PER_RUN)]
            for run in range(runs)]
    Ticket.tags.through.objects.bulk_create(
        Ticket.tags.through(ticket=ticket, tag=run_tags[index // TICKETS_PER_TAG])
        for run_tags in tags for index, ticket in enumerate(tickets))
    return tags


def delete_tags(servers, token: str, tags: list[Tag]) -> None:
    """Each tag deleted through one of the servers in turn, all at once."""

    def delete(index: int) -> None:
        client = ApiClient(servers[index % len(servers)].url, token)
        try:
            status, body = client.request("POST", f"/api/v1/projects/{tags[index].project_id}/tags/"
                                                  f"{tags[index].id}/delete")
            assert status == 200, body
        finally:
            client.close()

    with ThreadPoolExecutor(max_workers=len(tags)) as pool:
        list(pool.map(delete, range(len(tags))))


def wait_for_all(receivers, count: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    for receiver in receivers:
        receiver.wait_for(count, timeout=max(deadline - time.monotonic(), 0.1))


def received_seqs(receiver, secret: str, after: int) -> Counter:
    """How often each event (by seq) past `after` reached the receiver, every body verified against its
    signature; the same event always came with the same webhook-id."""
    seen, ids = Counter(), {}
    for received in list(receiver.received):
        frame = received.verified(secret)
        if frame["seq"] > after:
            seen[frame["seq"]] += 1
            assert ids.setdefault(frame["seq"], received.message_id) == received.message_id
    return seen


def test_every_event_reaches_every_endpoint_once_and_survives_a_killed_worker(project, manager):
    token = issue_token(user=manager)[1]
    calm, storm = tagged_tickets(project, runs=2)
    env = {
        "DATABASE_URL": served_database_url(), "REDIS_URL": os.environ["REDIS_URL"], "WEB_CONCURRENCY": "1",
        "DATABASE_POOL_MIN_SIZE": "1", "DATABASE_POOL_MAX_SIZE": "4", "API_RATE_LIMIT_PER_MINUTE": "1000000",
        "API_USER_RATE_LIMIT_PER_MINUTE": "1000000", "WEBHOOK_ALLOWED_PRIVATE_HOSTS": "127.0.0.1",
        # A worker's lost deliveries are handed out again after 15 s, past the deadline of an attempt (the default
        # 10 s: the receivers, threads of this process, answer bursts of hundreds at once on a shared machine).
        "WEBHOOK_LOST_AFTER_SECONDS": "15", "WEBHOOK_SWEEP_SECONDS": "0.5",
    }
    receivers = [Receiver().__enter__() for _ in range(ENDPOINTS)]
    try:
        with ProcfileServer(env) as web_a, ProcfileServer(env) as web_b, ProcfileWorker(env) as doomed, \
                ProcfileWorker(env):
            client = ApiClient(web_a.url, token)
            secrets = [client.request("POST", f"/api/v1/projects/{project.id}/webhooks",
                                      {"url": receiver.url})[1]["secret"] for receiver in receivers]
            client.close()

            delete_tags([web_a, web_b], token, calm)
            wait_for_all(receivers, EVENTS, timeout=60)
            for receiver, secret in zip(receivers, secrets, strict=True):
                assert received_seqs(receiver, secret, after=0) == Counter(range(1, EVENTS + 1))
            # Each sent in one attempt, and recorded: none is left to be sent again.
            assert Counter(Delivery.objects.values_list("status", "attempts")) == {("delivered", 1): ENDPOINTS * EVENTS}

            # Again, and a worker dies once the deliveries are under way.
            killed = threading.Event()

            def kill_midway():
                receivers[0].wait_for(EVENTS + EVENTS // 5, timeout=60)
                doomed.kill()
                killed.set()

            threading.Thread(target=kill_midway, daemon=True).start()
            delete_tags([web_a, web_b], token, storm)
            assert killed.wait(timeout=60)
            storm_seqs = set(range(EVENTS + 1, 2 * EVENTS + 1))
            for receiver in receivers:  # every message of the storm, some perhaps twice
                receiver.wait_until(lambda received: len(received) >= 2 * EVENTS and storm_seqs <= {
                    r.frame()["seq"] for r in received}, timeout=60)
            for receiver, secret in zip(receivers, secrets, strict=True):
                seen = received_seqs(receiver, secret, after=EVENTS)
                assert set(seen) == storm_seqs
                assert max(seen.values()) <= 2
    finally:
        for receiver in receivers:
            receiver.__exit__(None, None, None)


def test_a_hundred_hung_endpoints_delay_no_healthy_one(manager):
    env = {"DATABASE_URL": served_database_url(), "REDIS_URL": os.environ["REDIS_URL"], "WEB_CONCURRENCY": "1",
           "WEBHOOK_ALLOWED_PRIVATE_HOSTS": "127.0.0.1"}  # the production defaults otherwise: a 10 s deadline
    with ProcfileServer(env) as web, ProcfileWorker(env) as worker:
        hung_endpoints_delay_no_healthy_one(web.url, issue_token(user=manager)[1], concurrency=4)
        # Its log holds what happened, not a line per sweep: the beat's routine lines are DEBUG.
        assert "beat: Starting" in worker.output() and "Sending due task" not in worker.output()
