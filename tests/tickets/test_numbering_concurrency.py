from concurrent.futures import ThreadPoolExecutor
from threading import Barrier

import pytest
from django.db import connection

from tests.factories import ProjectFactory
from tickets import services
from tickets.models import Ticket
from tickets.services.positions import GAP

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL's row locks and real threads"),
]

THREADS = 8
PER_THREAD = 10


@pytest.mark.parametrize("prepared", [pytest.param(True, marks=pytest.mark.direct_postgres), False],
                         ids=["reads-with-the-lock", "plain-queries"])
def test_concurrent_creation_gives_consecutive_unique_numbers_each_at_the_end_of_the_column(monkeypatch, prepared):
    """Either way the column's end is read (in the round trip of the UPDATE that takes the project's lock, or
    behind PgBouncer after it), it is read once the lock is granted."""
    if not prepared:
        monkeypatch.setitem(connection.settings_dict, "OPTIONS",
                            {**connection.settings_dict["OPTIONS"], "prepare_threshold": None})
    project = ProjectFactory()
    start = Barrier(THREADS)

    def create_many(worker: int) -> list[int]:
        start.wait()  # all threads hit the counter at once
        try:
            return [services.create_ticket(project=project, actor=project.owner, title=f"w{worker}-{n}").number
                    for n in range(PER_THREAD)]
        finally:
            connection.close()

    with ThreadPoolExecutor(THREADS) as pool:
        numbers = [number for batch in pool.map(create_many, range(THREADS)) for number in batch]

    assert sorted(numbers) == list(range(1, THREADS * PER_THREAD + 1))
    assert Ticket.objects.filter(project=project).count() == THREADS * PER_THREAD
    project.refresh_from_db()
    assert project.last_ticket_number == THREADS * PER_THREAD
    # Each read its column's end once the creation it queued behind had committed: one after the other, GAP apart.
    sort_orders = Ticket.objects.filter(project=project).order_by("number").values_list("sort_order", flat=True)
    assert list(sort_orders) == [GAP * position for position in range(THREADS * PER_THREAD)]
