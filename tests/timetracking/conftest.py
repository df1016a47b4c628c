from datetime import UTC, datetime, timedelta

import pytest

from tests.factories import TicketFactory

START = datetime(2025, 3, 10, 9, 0, 0, tzinfo=UTC)


class Clock:
    """The time every service reads (django.utils.timezone.now), moved by hand instead of sleeping."""

    def __init__(self, now: datetime):
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta) -> None:
        self.now += timedelta(**delta)

    def set(self, now: datetime) -> None:
        self.now = now


@pytest.fixture
def clock(monkeypatch):
    clock = Clock(START)
    monkeypatch.setattr("django.utils.timezone.now", clock)
    return clock


@pytest.fixture
def ticket(project, manager):
    return TicketFactory(project=project, created_by=manager, title="Fix login")


def entries_url(ticket) -> str:
    return f"/api/v1/tickets/{ticket.id}/time-entries"


def start_url(ticket) -> str:
    return f"/api/v1/tickets/{ticket.id}/time-entries/start"


def entry_url(entry, action: str) -> str:
    return f"/api/v1/time-entries/{getattr(entry, 'id', entry)}/{action}"


RUNNING_URL = "/api/v1/time-entries/running"
ACTIVE_URL = "/api/v1/time-entries/active"
