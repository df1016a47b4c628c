from concurrent.futures import ThreadPoolExecutor
from threading import Barrier

import pytest
from django.db import connection
from rest_framework.test import APIClient

from accounts.services import issue_token
from tests.factories import MembershipFactory, ProjectFactory, TicketFactory
from timetracking.models import TimeEntry, TimerState

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL's concurrent transactions"),
]

STARTS = 10


def test_ten_simultaneous_starts_by_one_user_leave_one_running_timer():
    project = ProjectFactory()
    user = MembershipFactory(project=project).user
    # One ticket each, so no ticket lock queues them: only the unique index can tell them apart.
    tickets = [TicketFactory(project=project) for _ in range(STARTS)]
    token = issue_token(user=user)[1]
    start = Barrier(STARTS)

    def start_timer(ticket) -> tuple[int, dict]:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        start.wait()  # every request at once
        try:
            response = client.post(f"/api/v1/tickets/{ticket.id}/time-entries/start")
            return response.status_code, response.json()
        finally:
            connection.close()

    with ThreadPoolExecutor(STARTS) as pool:
        answers = list(pool.map(start_timer, tickets))

    running = TimeEntry.objects.get(user=user, is_running=TimerState.RUNNING)
    assert TimeEntry.objects.count() == 1
    assert sorted(status for status, _ in answers) == [200] + [422] * (STARTS - 1)
    assert [body for status, body in answers if status == 422] == [
        {
            "code": "validation_failed",
            "error": "a timer is already running", "running_ticket_id": running.ticket_id}] * (STARTS - 1)
    assert [body["entry"]["id"] for status, body in answers if status == 200] == [running.id]
