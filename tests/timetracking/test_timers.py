"""Timers: start, pause, resume, stop, with the arithmetic checked on a clock moved by hand."""

import pytest

from projects.roles import Role
from tests.conftest import ROLES
from tests.factories import TicketFactory, TimeEntryFactory
from timetracking import selectors
from timetracking.models import TimeEntry, TimerState

from .conftest import START, entry_url, history_of, start_url, timer_shape

T0 = "2025-03-10 09:00:00"


def state(entry) -> tuple:
    entry = TimeEntry.objects.get(pk=getattr(entry, "pk", entry))
    return entry.is_running, entry.seconds, entry.started_at, entry.stopped_at


@pytest.fixture
def running(client_for, editor, ticket, clock):
    """The editor's timer, started at START through the API."""
    return client_for(editor).post(start_url(ticket)).json()["entry"]["id"]


@pytest.fixture
def paused(client_for, editor, running, clock):
    """Ran 150 seconds, then paused."""
    clock.advance(seconds=150)
    client_for(editor).post(entry_url(running, "pause"))
    return running


class TestStart:
    def test_starts_a_running_timer_at_zero_minutes(self, client_for, editor, ticket, clock):
        response = client_for(editor).post(start_url(ticket))

        entry = TimeEntry.objects.get()
        assert (response.status_code, response.json()) == (200, {"success": True, "entry": timer_shape(
            entry.id, ticket, minutes=0, is_running=1, started_at=T0)})
        assert (entry.user, entry.project_id, state(entry)) == (editor, ticket.project_id, (1, 0, START, None))
        assert history_of(ticket) == [("time_started", editor.id, {"time_entry": {"old": None, "new": {
            "id": entry.id, "user_id": editor.id, "minutes": 0, "is_running": 1, "note": ""}}})]

    def test_a_second_running_timer_is_422_with_its_ticket_and_changes_nothing(self, client_for, editor, project,
                                                                               ticket, running):
        other = TicketFactory(project=project)
        response = client_for(editor).post(start_url(other))
        assert (response.status_code, response.json()) == (422, {"code": "validation_failed",
            "error": "a timer is already running", "running_ticket_id": ticket.id})
        assert list(TimeEntry.objects.values_list("pk", flat=True)) == [running]
        assert history_of(other) == []

    def test_again_on_the_same_ticket_is_422_too(self, client_for, editor, ticket, running):
        response = client_for(editor).post(start_url(ticket))
        assert (response.status_code, response.json()["running_ticket_id"]) == (422, ticket.id)
        assert TimeEntry.objects.count() == 1

    def test_neither_a_paused_timer_nor_another_users_running_one_blocks(self, client_for, editor, manager,
                                                                        project, ticket, paused):
        other = TicketFactory(project=project)
        assert client_for(manager).post(start_url(ticket)).status_code == 200
        assert client_for(editor).post(start_url(other)).status_code == 200
        assert sorted(TimeEntry.objects.values_list("user_id", "is_running")) == sorted(
            [(editor.id, 2), (manager.id, 1), (editor.id, 1)])

    def test_a_stopped_timer_frees_the_slot(self, client_for, editor, project, running, clock):
        api = client_for(editor)
        api.post(entry_url(running, "stop"))
        assert api.post(start_url(TicketFactory(project=project))).status_code == 200

    def test_the_loser_of_a_simultaneous_start_gets_the_422_not_a_500(self, client_for, editor, project, ticket,
                                                                      monkeypatch):
        """The check saw no timer (the other start had not committed): the unique index refuses the insert."""
        winner = TimeEntryFactory(ticket=ticket, user=editor, is_running=TimerState.RUNNING, seconds=0)
        checks = iter([None])
        real = selectors.running_timer
        monkeypatch.setattr(selectors, "running_timer", lambda *, user: next(checks, None) or real(user=user))

        response = client_for(editor).post(start_url(TicketFactory(project=project)))

        assert (response.status_code, response.json()) == (422, {"code": "validation_failed",
            "error": "a timer is already running", "running_ticket_id": ticket.id})
        assert list(TimeEntry.objects.values_list("pk", flat=True)) == [winner.pk]

    @pytest.mark.parametrize("role", ROLES)
    def test_any_member_may_start(self, client_for, member_with, ticket, role):
        assert client_for(member_with(role)).post(start_url(ticket)).status_code == 200
        assert TimeEntry.objects.count() == 1


class TestPause:
    def test_keeps_the_time_of_the_segment(self, client_for, editor, ticket, running, clock):
        clock.advance(seconds=150)
        response = client_for(editor).post(entry_url(running, "pause"))
        assert (response.status_code, response.json()) == (200, {"success": True, "entry": timer_shape(
            running, ticket, minutes=2, is_running=2, started_at=T0)})
        assert state(running) == (2, 150, START, None)

    def test_a_paused_timer_does_not_count_on(self, client_for, editor, ticket, paused, clock):
        clock.advance(hours=5)
        assert client_for(editor).get("/api/v1/time-entries/running").json()["entry"]["minutes"] == 2
        assert state(paused)[:2] == (2, 150)

    @pytest.mark.parametrize("which", ["paused", "stopped", "manual"])
    def test_only_a_running_timer_pauses(self, client_for, editor, ticket, paused, which):
        api = client_for(editor)
        if which == "stopped":
            api.post(entry_url(paused, "stop"))
        entry = TimeEntryFactory(ticket=ticket, user=editor).pk if which == "manual" else paused
        before = state(entry)
        response = api.post(entry_url(entry, "pause"))
        assert (response.status_code, response.json()) == (422, {
            "code": "validation_failed", "error": "the timer is not running"})
        assert state(entry) == before


class TestResume:
    def test_starts_a_new_segment_and_keeps_the_earlier_ones(self, client_for, editor, ticket, paused, clock):
        clock.advance(minutes=30)
        response = client_for(editor).post(entry_url(paused, "resume"))
        assert (response.status_code, response.json()) == (200, {"success": True, "entry": timer_shape(
            paused, ticket, minutes=2, is_running=1, started_at="2025-03-10 09:32:30")})

        clock.advance(seconds=100)  # 150 + 100 = 250 s: 4 min 10 s
        stopped = client_for(editor).post(entry_url(paused, "stop")).json()["entry"]
        assert (stopped["minutes"], stopped["stopped_at"]) == (4, "2025-03-10 09:34:10")

    def test_refused_while_another_timer_of_the_caller_runs(self, client_for, editor, project, paused):
        api = client_for(editor)
        other = TicketFactory(project=project)
        api.post(start_url(other))
        before = state(paused)
        response = api.post(entry_url(paused, "resume"))
        assert (response.status_code, response.json()) == (422, {"code": "validation_failed",
            "error": "a timer is already running", "running_ticket_id": other.id})
        assert state(paused) == before

    @pytest.mark.parametrize("which", ["running", "stopped"])
    def test_only_a_paused_timer_resumes(self, client_for, editor, running, which):
        api = client_for(editor)
        if which == "stopped":
            api.post(entry_url(running, "stop"))
        before = state(running)
        response = api.post(entry_url(running, "resume"))
        assert (response.status_code, response.json()) == (422, {
            "code": "validation_failed", "error": "the timer is not paused"})
        assert state(running) == before


class TestStop:
    @pytest.mark.parametrize(("elapsed", "minutes"), [
        (0, 1), (20, 1), (89, 1), (90, 2), (149, 2), (150, 3), (3629, 60), (3630, 61)])
    def test_rounds_to_the_nearest_minute_at_least_one(self, client_for, editor, ticket, running, clock,
                                                       elapsed, minutes):
        clock.advance(seconds=elapsed)
        response = client_for(editor).post(entry_url(running, "stop"))
        stopped_at = START.replace(minute=elapsed // 60 % 60, second=elapsed % 60, hour=9 + elapsed // 3600)
        assert (response.status_code, response.json()) == (200, {"success": True, "entry": timer_shape(
            running, ticket, minutes=minutes, is_running=0, started_at=T0,
            stopped_at=stopped_at.strftime("%Y-%m-%d %H:%M:%S"))})
        assert state(running) == (0, minutes * 60, START, stopped_at)

    def test_a_paused_timer_stops_with_its_kept_time(self, client_for, editor, ticket, paused, clock):
        clock.advance(hours=2)
        response = client_for(editor).post(entry_url(paused, "stop"))
        assert (response.json()["entry"]["minutes"], state(paused)[:2]) == (3, (0, 180))  # 150 s rounds up

    def test_records_the_final_minutes_in_the_history(self, client_for, editor, ticket, paused, clock):
        client_for(editor).post(entry_url(paused, "stop"))
        assert history_of(ticket)[-1] == ("time_stopped", editor.id, {"time_entry": {
            "old": {"id": paused, "user_id": editor.id, "minutes": 2, "is_running": 2, "note": ""},
            "new": {"id": paused, "user_id": editor.id, "minutes": 3, "is_running": 0, "note": ""}}})

    @pytest.mark.parametrize("which", ["stopped", "manual"])
    def test_a_stopped_entry_cannot_stop_again(self, client_for, editor, ticket, running, which):
        api = client_for(editor)
        api.post(entry_url(running, "stop"))
        entry = TimeEntryFactory(ticket=ticket, user=editor).pk if which == "manual" else running
        before, entries_in_history = state(entry), len(history_of(ticket))
        response = api.post(entry_url(entry, "stop"))
        assert (response.status_code, response.json()) == (422, {
            "code": "validation_failed", "error": "the timer is already stopped"})
        assert (state(entry), len(history_of(ticket))) == (before, entries_in_history)


OWNER_ACTIONS = ["stop", "pause", "resume"]


@pytest.mark.parametrize("action", OWNER_ACTIONS)
@pytest.mark.parametrize("role", ROLES)
def test_only_the_owner_works_a_timer_whatever_the_others_role(client_for, member_with, ticket, clock, action, role):
    owner = member_with(Role.VIEWER)
    entry = TimeEntryFactory(ticket=ticket, user=owner, seconds=0, started_at=START,
                             is_running=TimerState.PAUSED if action == "resume" else TimerState.RUNNING)
    before = state(entry)
    refused = client_for(member_with(role)).post(entry_url(entry, action))
    assert (refused.status_code, refused.json()) == (403, {"code": "forbidden",
        "error": "only the owner of a timer can stop, pause or resume it"})
    assert state(entry) == before
    assert client_for(owner).post(entry_url(entry, action)).status_code == 200
