"""Two real servers under concurrent reads and writes on PostgreSQL: no 5xx, consecutive ticket numbers,
and each server's database connections bounded by its pool (a persistent connection per ASGI thread used to
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
POOL_MAX_SIZE = 4  # well under the clients of a server, so requests must queue for a connection
SERVERS = ["tracker-load-test-a", "tracker-load-test-b"]  # their PostgreSQL application_name


def one_client(server_url: str, token: str, project_id: int) -> tuple[list, list]:
    """50 requests, 2 creates and 2 moves out of each 10; the answers' statuses and the created refs."""
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
            call("GET", f"{tickets}/{number}")
            number = create()
            call("GET", f"/api/v1/projects/{project_id}/board")
            call("GET", f"{tickets}/{number}")
            call("POST", f"{tickets}/{number}/move", {"status": "review"})
            call("GET", f"{tickets}/{number}")
    finally:
        client.close()
    return statuses, refs


class ServerConnections(threading.Thread):
    """Samples, until stopped, how many connections each server holds to the test database."""

    def __init__(self):
        super().__init__(daemon=True)
        self.samples: list[dict[str, int]] = []
        self.stop = threading.Event()

    def count(self) -> dict[str, int]:
        with connections["default"].cursor() as cursor:
            cursor.execute("SELECT application_name, count(*) FROM pg_stat_activity "
                           "WHERE datname = current_database() AND application_name = ANY(%s) "
                           "GROUP BY application_name", [SERVERS])
            return {name: 0 for name in SERVERS} | dict(cursor.fetchall())

    def run(self) -> None:
        try:
            while not self.stop.wait(0.05):
                self.samples.append(self.count())
        finally:
            connections["default"].close()


@pytest.mark.direct_postgres  # counts the servers' connections: behind PgBouncer they are its own
def test_concurrent_reads_and_writes_get_no_5xx_and_stay_within_the_pool(project, manager):
    token = issue_token(user=manager)[1]

    def server(name: str) -> DaphneServer:
        return DaphneServer({"DATABASE_URL": served_database_url(application_name=name),
                             "DATABASE_POOL_MIN_SIZE": "1", "DATABASE_POOL_MAX_SIZE": str(POOL_MAX_SIZE)})

    with server(SERVERS[0]) as server_a, server(SERVERS[1]) as server_b:
        urls = [server_a.url, server_b.url]
        sampler = ServerConnections()
        sampler.start()
        try:
            with ThreadPoolExecutor(CLIENTS) as pool:
                results = list(pool.map(lambda i: one_client(urls[i % 2], token, project.id), range(CLIENTS)))
        finally:
            sampler.stop.set()
            sampler.join()
        after = [sampler.count() for _ in range(5)]

    statuses = [status for client_statuses, _ in results for status in client_statuses]
    refs = [ref for _, client_refs in results for ref in client_refs]
    assert len(statuses) == CLIENTS * ROUNDS * 10
    assert [status for status in statuses if status[2] not in {200, 201}] == []
    assert sorted(int(ref.rsplit("-", 1)[1]) for ref in refs) == list(range(1, CLIENTS * ROUNDS * 2 + 1))
    assert len(sampler.samples) > 20
    for name in SERVERS:
        during = [sample[name] for sample in sampler.samples]
        assert 1 <= max(during) <= POOL_MAX_SIZE, (name, during)
        assert max(sample[name] for sample in after) <= POOL_MAX_SIZE, (name, after)
