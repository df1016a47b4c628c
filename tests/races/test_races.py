"""Issue 15, item 9: races on PostgreSQL through the Procfile's server (two worker processes, each with
its pool), from parallel connections released together at a barrier: ticket numbers stay consecutive,
one user holds one running timer, and a column's order survives concurrent sorts and moves."""

import os
import random
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from accounts.services import issue_token
from tests.factories import StatusFactory, TicketFactory
from tests.realtime.servers import ApiClient, served_database_url
from tests.security.procfile import ProcfileServer
from tickets.models import Ticket
from tickets.services.positions import GAP
from timetracking.models import TimeEntry, TimerState

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(not os.environ.get("DATABASE_URL", "").startswith("postgres"),
                       reason="needs PostgreSQL (DATABASE_URL)"),
    pytest.mark.django_db(transaction=True),  # the server reads what the test writes: it must be committed
]


@pytest.fixture(scope="module")
def server(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        database_url = served_database_url()
    env = {"DATABASE_URL": database_url, "REDIS_URL": os.environ.get("REDIS_URL", ""), "WEB_CONCURRENCY": "2",
           "API_RATE_LIMIT_PER_MINUTE": "1000000", "API_USER_RATE_LIMIT_PER_MINUTE": "1000000"}
    with ProcfileServer(env) as server:
        yield server


def tracebacks(server) -> str:
    return "\n".join(block for block in server.output().split("\n\n") if "Traceback" in block)[-4000:]


def in_parallel(count: int, work) -> list:
    """`work(index)` in `count` threads that start together; their results in order."""
    barrier = threading.Barrier(count)

    def run(index: int):
        barrier.wait(timeout=30)
        return work(index)

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(run, range(count)))


def test_200_parallel_creates_number_200_consecutive_tickets(server, project, manager):
    token, path = issue_token(user=manager)[1], f"/api/v1/projects/{project.id}/tickets"

    def creator(index: int) -> list[tuple[int, dict | None]]:
        client = ApiClient(server.url, token)
        try:
            return [client.request("POST", path, {"title": f"Race {index}.{n}"}) for n in range(10)]
        finally:
            client.close()

    answers = [answer for batch in in_parallel(20, creator) for answer in batch]

    assert Counter(status for status, _ in answers) == {201: 200}, f"{[a for a in answers if a[0] != 201][:5]}\n{tracebacks(server)}"
    numbers = sorted(int(body["ticket_ref"].rsplit("-", 1)[1]) for _, body in answers)
    assert numbers == list(range(1, 201))
    assert sorted(Ticket.objects.filter(project=project).values_list("number", flat=True)) == numbers


def test_20_parallel_timer_starts_leave_exactly_one_running(server, project, manager):
    tickets = [TicketFactory(project=project) for _ in range(20)]
    token = issue_token(user=manager)[1]

    def starter(index: int) -> tuple[int, dict | None]:
        client = ApiClient(server.url, token)
        try:
            return client.request("POST", f"/api/v1/tickets/{tickets[index].id}/time-entries/start", {})
        finally:
            client.close()

    answers = in_parallel(20, starter)

    assert sorted(status for status, _ in answers) == [200] + [422] * 19, f"{answers}\n{tracebacks(server)}"
    running = TimeEntry.objects.filter(user=manager).exclude(is_running=TimerState.STOPPED)
    assert running.count() == 1
    winner = running.get().ticket_id
    assert [body["running_ticket_id"] for status, body in answers if status == 422] == [winner] * 19
    assert tickets[[status for status, _ in answers].index(200)].id == winner


def sort_and_move_storm(server, project, manager) -> tuple[Counter, list]:
    """12 clients on one column, half sorting it (read, shuffle, send back), half moving its tickets out
    and back; the answers' statuses, and the two columns."""
    left, right = StatusFactory(project=project, slug="left"), StatusFactory(project=project, slug="right")
    for n in range(12):
        TicketFactory(project=project, status=left, sort_order=n)
    numbers = list(Ticket.objects.filter(project=project).values_list("number", flat=True))
    token, base = issue_token(user=manager)[1], f"/api/v1/projects/{project.id}/tickets"

    def worker(index: int) -> list[int]:
        client, chance, statuses = ApiClient(server.url, token), random.Random(index), []
        try:
            for _ in range(15):
                if index % 2:
                    number = chance.choice(numbers)
                    status, _ = client.request("POST", f"{base}/{number}/move",
                                               {"status": chance.choice(["left", "right"])})
                else:
                    _, listing = client.request("GET", f"{base}?status=left")
                    ids = [ticket["id"] for ticket in listing["tickets"]]
                    chance.shuffle(ids)
                    status, _ = client.request("POST", f"{base}/sort", {"status": "left", "ticket_ids": ids})
                statuses.append(status)
        finally:
            client.close()
        return statuses

    return Counter(status for batch in in_parallel(12, worker) for status in batch), [left, right]


def test_parallel_moves_into_one_column_get_distinct_positions(server, project, manager):
    StatusFactory(project=project, slug="left")
    right = StatusFactory(project=project, slug="right")
    numbers = [TicketFactory(project=project, status=right, sort_order=n).number for n in range(12)]
    token, base = issue_token(user=manager)[1], f"/api/v1/projects/{project.id}/tickets"
    for target in ("left", "right", "left"):
        def mover(index: int, target=target) -> int:
            client = ApiClient(server.url, token)
            try:
                return client.request("POST", f"{base}/{numbers[index]}/move", {"status": target})[0]
            finally:
                client.close()

        assert in_parallel(12, mover) == [200] * 12
        orders = sorted(Ticket.objects.filter(status__slug=target, project=project)
                        .values_list("sort_order", flat=True))
        assert len(orders) == len(set(orders)), f"{target}: duplicate sort_order {orders}"


def test_concurrent_sorts_and_moves_keep_a_column_in_order(server, project, manager):
    statuses, (left, right) = sort_and_move_storm(server, project, manager)

    # A sort that lost the race to a move lists a column that no longer is: 422, nothing written.
    assert set(statuses) <= {200, 422}, f"{statuses}\n{tracebacks(server)}"
    assert statuses[200] > 90, statuses
    for column in (left, right):
        orders = list(Ticket.objects.filter(status=column).values_list("sort_order", flat=True))
        assert len(orders) == len(set(orders)), f"{column.slug}: duplicate sort_order {sorted(orders)}"
    # Whatever the storm left, the column sorts back into positions GAP apart, in the order it was given.
    in_order = list(Ticket.objects.filter(status=left).order_by("sort_order").values_list("id", flat=True))
    client = ApiClient(server.url, issue_token(user=manager)[1])
    try:
        assert client.request("POST", f"/api/v1/projects/{project.id}/tickets/sort",
                              {"status": "left", "ticket_ids": in_order})[0] == 200
    finally:
        client.close()
    assert list(Ticket.objects.filter(status=left).order_by("sort_order").values_list("sort_order", flat=True)) == (
        [index * GAP for index in range(len(in_order))])
