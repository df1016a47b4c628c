"""Two server processes on one PostgreSQL database, the same Idempotency-Key sent to both at once: one effect.
The claim is a row committed before the handler runs, so whichever process comes second finds it."""

import http.client
import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from accounts.services import issue_token
from core.models import IdempotencyKey
from tests.realtime.servers import DaphneServer, served_database_url
from tickets.models import Ticket

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(not os.environ.get("DATABASE_URL", "").startswith("postgres"), reason="needs PostgreSQL"),
    pytest.mark.django_db(transaction=True),
]

KEYS = 5
SENDERS_PER_SERVER = 4


def keyed_create(url: str, path: str, token: str, key: str, start: threading.Barrier) -> tuple[int, dict, str | None]:
    host, port = url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    connection.connect()
    start.wait(timeout=30)  # every sender connected: the requests leave together
    try:
        connection.request("POST", path, body=json.dumps({"title": f"Created once under {key}"}), headers={
            "Authorization": f"Bearer {token}", "Content-Type": "application/json", "Idempotency-Key": key})
        response = connection.getresponse()
        return response.status, json.loads(response.read()), response.getheader("Idempotent-Replayed")
    finally:
        connection.close()


def test_the_same_key_sent_to_two_servers_at_once_acts_once(project, editor):
    token = issue_token(user=editor)[1]
    path = f"/api/v1/projects/{project.id}/tickets"
    env = {"DATABASE_URL": served_database_url(), "REDIS_URL": ""}
    with DaphneServer(env) as one, DaphneServer(env) as other, ThreadPoolExecutor(2 * SENDERS_PER_SERVER) as pool:
        rounds = []
        for round_number in range(KEYS):
            key = f"two-servers-{round_number}"
            start = threading.Barrier(2 * SENDERS_PER_SERVER)
            sent = [pool.submit(keyed_create, server.url, path, token, key, start)
                    for server in (one, other) for _ in range(SENDERS_PER_SERVER)]
            rounds.append((key, [future.result(timeout=60) for future in sent]))

    busy = (409, {
        "code": "idempotency_conflict",
        "error": "a request with this Idempotency-Key is still being served: retry later"}, None)
    for key, answers in rounds:
        ticket_ref = Ticket.objects.get(title=f"Created once under {key}").prefix_ref
        acted, replayed = (201, {"ticket_ref": ticket_ref}, None), (201, {"ticket_ref": ticket_ref}, "true")
        assert answers.count(acted) == 1, answers
        assert all(answer in (acted, replayed, busy) for answer in answers), answers
    assert Ticket.objects.count() == KEYS
    assert IdempotencyKey.objects.filter(status=201).count() == KEYS
