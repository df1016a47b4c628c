from datetime import UTC, datetime, timedelta

import pytest

from tests.factories import TicketFactory
from tickets.models import Activity

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


def timer_shape(entry_id: int, ticket, *, minutes: int, is_running: int, started_at: str | None,
                stopped_at: str | None = None, note: str = "") -> dict:
    """An entry as start, stop, pause, resume, running and active show it."""
    return {"id": entry_id, "ticket_id": ticket.id, "minutes": minutes, "is_running": is_running,
            "started_at": started_at, "stopped_at": stopped_at, "note": note, "ticket_title": ticket.title,
            "project_name": ticket.project.name, "ticket_ref": ticket.prefix_ref}


def listed_shape(entry_id: int, ticket, user, *, minutes: int, is_running: int = 0, started_at: str | None = None,
                 stopped_at: str | None = None, note: str = "") -> dict:
    """An entry as the ticket's list shows it (and adding or updating one answers)."""
    return {"id": entry_id, "ticket_id": ticket.id, "user_id": user.id, "project_id": ticket.project_id,
            "minutes": minutes, "is_running": is_running, "started_at": started_at, "stopped_at": stopped_at,
            "note": note, "user_name": user.display_name, "user_avatar": user.avatar}


def history_of(ticket) -> list[tuple]:
    return list(Activity.objects.filter(ticket=ticket).order_by("id").values_list("action", "actor_id", "changes"))
