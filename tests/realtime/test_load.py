"""A real server under concurrent reads and writes on PostgreSQL: no 5xx, consecutive ticket numbers, and
the server's database connections bounded by its pool (a persistent connection per ASGI thread used to
exhaust PostgreSQL: "too many clients", answered 500)."""

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connections

from accounts.services import issue_token

from .servers import ApiClient, DaphneServer, served_database_url

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(not os.environ.get("DATABASE_URL", "").startswith("postgres"),
                       reason="needs PostgreSQL (DATABASE_URL)"),
    # The server reads what the test writes: it must be committed.
    pytest.mark.django_db(transaction=True),
]

CLIENTS = 16
ROUNDS = 5  # of the 10 requests below: 50 per client
POOL_MAX_SIZE = 4  # well under the clients, so requests must queue for a connection
APPLICATION_NAME = "tracker-load-test"


def one_client(server_url: str, token: str, project_id: int) -> tuple[list, list]:
    """50 requests, 3 creates and 2 moves out of each 10; the answers' statuses and the created refs."""
    client, tickets = ApiClient(server_url, token), f"/api/v1/projects/{project_id}/tickets"
    statuses, refs = [], []

    def call(method: str, path: str, body: dict | None = None) -> dict | None:
        status, answer = client.request(method, path, body)
        statuses.append((method, path, status, answer if status >= 400 else None))
        return answer if status < 400 else None

    def create() -> int | None:
        answer = call("POST", tickets, {"title": "Under load"})
        if answer:
            refs.append(answer["ticket_ref"])
            return int(answer["ticket_ref"].rsplit("-", 1)[1])
        return None

    try:
        for _ in range(ROUNDS):
            number = create()
            call("GET", f"{tickets}/{number}")
            call("POST", f"{tickets}/{number}/move", {"status": "done"})
            call("GET", tickets)
            number = create()
            call("GET", f"/api/v1/projects/{project_id}/board")
            call("GET", f"{tickets}/{number}")
            call("POST", f"{tickets}/{number}/move", {"status": "review"})
            call("GET", f"{tickets}?status=done")
            create()
    finally:
        client.close()
    return statuses, refs


class ServerConnections(threading.Thread):
    """Samples, until stopped, how many connections the server holds to the test database."""

    def __init__(self):
        super().__init__(daemon=True)
        self.samples: list[int] = []
        self.stop = threading.Event()

    def count(self) -> int:
        with connections["default"].cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                           "AND application_name = %s", [APPLICATION_NAME])
            return cursor.fetchone()[0]

    def run(self) -> None:
        try:
            while not self.stop.wait(0.05):
                self.samples.append(self.count())
        finally:
            connections["default"].close()


def test_concurrent_reads_and_writes_get_no_5xx_and_stay_within_the_pool(project, manager):
    token = issue_token(user=manager)[1]
    env = {"DATABASE_URL": served_database_url(application_name=APPLICATION_NAME),
           "DATABASE_POOL_MIN_SIZE": "1", "DATABASE_POOL_MAX_SIZE": str(POOL_MAX_SIZE)}

    with DaphneServer(env) as server:
        sampler = ServerConnections()
        sampler.start()
        try:
            with ThreadPoolExecutor(CLIENTS) as pool:
                results = list(pool.map(lambda _: one_client(server.url, token, project.id), range(CLIENTS)))
        finally:
            sampler.stop.set()
            sampler.join()
        during = sampler.samples
        after = [sampler.count() for _ in range(5)]

    statuses = [status for client_statuses, _ in results for status in client_statuses]
    refs = [ref for _, client_refs in results for ref in client_refs]
    assert len(statuses) == CLIENTS * ROUNDS * 10
    assert [status for status in statuses if status[2] not in {200, 201}] == []
    assert sorted(int(ref.rsplit("-", 1)[1]) for ref in refs) == list(range(1, CLIENTS * ROUNDS * 3 + 1))
    assert len(during) > 20 and 1 <= max(during) <= POOL_MAX_SIZE, during
    assert max(after) <= POOL_MAX_SIZE, after
