"""Tickets that go away: an archived ticket takes no new time but its running timer counts on and stops;
a deleted ticket's entries leave the caller's timers, and its forgotten timer blocks nothing."""

from datetime import timedelta

import pytest

from tests.factories import MembershipFactory, ProjectFactory, TicketFactory, TimeEntryFactory
from timetracking.models import TimeEntry, TimerState

from .conftest import ACTIVE_URL, RUNNING_URL, START, entries_url, entry_url, history_of, start_url

ARCHIVED = {"code": "validation_failed", "error": "ticket is archived: unarchive it first"}


def archive(api, ticket):
    assert api.post(f"/api/v1/projects/{ticket.project_id}/tickets/{ticket.number}/archive").status_code == 200


def delete(api, ticket):
    assert api.post(f"/api/v1/projects/{ticket.project_id}/tickets/{ticket.number}/delete").status_code == 200


def rows() -> list:
    return list(TimeEntry.objects.order_by("pk").values())


class TestArchived:
    @pytest.mark.parametrize(("path", "body"), [(start_url, {}), (entries_url, {"minutes": 5})])
    def test_no_new_time_on_an_archived_ticket(self, client_for, manager, ticket, path, body):
        api = client_for(manager)
        archive(api, ticket)
        response = api.post(path(ticket), body)
        assert (response.status_code, response.json()) == (422, ARCHIVED)
        assert not TimeEntry.objects.exists()

    def test_a_running_timer_counts_on_and_stops(self, client_for, manager, ticket, clock):
        api = client_for(manager)
        entry = api.post(start_url(ticket)).json()["entry"]["id"]
        clock.advance(minutes=10)
        archive(api, ticket)
        clock.advance(minutes=20)
        assert api.get(RUNNING_URL).json()["entry"]["id"] == entry
        response = api.post(entry_url(entry, "stop"))
        assert (response.status_code, response.json()["entry"]["minutes"]) == (200, 30)

    def test_it_may_pause_but_not_resume(self, client_for, manager, ticket, clock):
        api = client_for(manager)
        entry = api.post(start_url(ticket)).json()["entry"]["id"]
        archive(api, ticket)
        clock.advance(minutes=5)
        assert api.post(entry_url(entry, "pause")).json()["entry"]["minutes"] == 5
        before = rows()
        response = api.post(entry_url(entry, "resume"))
        assert (response.status_code, response.json(), rows()) == (422, ARCHIVED, before)

    @pytest.mark.parametrize(("action", "body"), [("update", {"minutes": 5}), ("delete", {})])
    def test_its_entries_are_not_edited(self, client_for, manager, ticket, action, body):
        api = client_for(manager)
        entry = TimeEntryFactory(ticket=ticket, user=manager)
        archive(api, ticket)
        before = rows()
        response = api.post(entry_url(entry, action), body)
        assert (response.status_code, response.json(), rows()) == (422, ARCHIVED, before)

    def test_its_entries_are_still_listed(self, client_for, manager, ticket):
        api = client_for(manager)
        TimeEntryFactory(ticket=ticket, user=manager)
        archive(api, ticket)
        assert api.get(entries_url(ticket)).json()["total_minutes"] == 30


class TestDeleted:
    def test_its_timers_leave_running_and_active(self, client_for, manager, project, ticket):
        api = client_for(manager)
        TimeEntryFactory(ticket=ticket, user=manager, seconds=0, is_running=TimerState.RUNNING, started_at=START)
        kept = TimeEntryFactory(ticket=TicketFactory(project=project), user=manager, seconds=0,
                                is_running=TimerState.PAUSED, started_at=START)
        delete(api, ticket)
        assert api.get(RUNNING_URL).json()["entry"]["id"] == kept.id
        assert [entry["id"] for entry in api.get(ACTIVE_URL).json()["entries"]] == [kept.id]

    def test_a_forgotten_timer_is_stopped_by_the_next_start(self, client_for, manager, project, ticket, clock):
        """Its owner can neither see nor stop it, so it must not keep the one running slot."""
        api = client_for(manager)
        forgotten = api.post(start_url(ticket)).json()["entry"]["id"]
        clock.advance(minutes=40)
        delete(api, ticket)
        clock.advance(minutes=5)

        other = TicketFactory(project=project)
        response = api.post(start_url(other))

        assert (response.status_code, response.json()["entry"]["ticket_id"]) == (200, other.id)
        forgotten = TimeEntry.objects.get(pk=forgotten)
        assert (forgotten.is_running, forgotten.seconds, forgotten.stopped_at) == (
            0, 45 * 60, START + timedelta(minutes=45))
        assert [action for action, *_ in history_of(ticket)][-1] == "time_stopped"

    def test_so_is_a_timer_in_a_project_its_owner_left(self, client_for, editor, project, ticket):
        TimeEntryFactory(ticket=ticket, user=editor, seconds=0, is_running=TimerState.RUNNING, started_at=START)
        project.memberships.filter(user=editor).delete()
        elsewhere = ProjectFactory()
        MembershipFactory(project=elsewhere, user=editor)
        response = client_for(editor).post(start_url(TicketFactory(project=elsewhere)))
        assert response.status_code == 200
        assert TimeEntry.objects.filter(is_running=TimerState.RUNNING).get().project_id == elsewhere.id
