"""Who reaches the routes at all: 401 without a token, 404 for a non-member (worded like a missing id),
404 for the entries of a deleted ticket; the running and active lists of the caller only."""

import pytest
from django.utils import timezone

from tests.factories import MembershipFactory, ProjectFactory, TicketFactory, TimeEntryFactory
from timetracking.models import TimeEntry, TimerState

from .conftest import ACTIVE_URL, RUNNING_URL, START, entry_url, timer_shape

MISSING = 987654321
TICKET_ROUTES = [("get", "/api/v1/tickets/{}/time-entries"), ("post", "/api/v1/tickets/{}/time-entries"),
                 ("post", "/api/v1/tickets/{}/time-entries/start")]
ENTRY_ROUTES = [("post", f"/api/v1/time-entries/{{}}/{action}")
                for action in ["stop", "pause", "resume", "update", "delete"]]
CALLER_ROUTES = [("get", RUNNING_URL), ("get", ACTIVE_URL)]


@pytest.fixture
def entry(ticket, manager):
    return TimeEntryFactory(ticket=ticket, user=manager, is_running=TimerState.RUNNING, seconds=0,
                            started_at=timezone.now())


def snapshot() -> list:
    return list(TimeEntry.objects.order_by("pk").values())


@pytest.mark.parametrize(("method", "path"), [*TICKET_ROUTES, *ENTRY_ROUTES, *CALLER_ROUTES,
                                              ("get", "/api/v1/projects/{}/time-report")])
def test_without_a_token_every_route_is_401(anonymous, entry, method, path):
    before = snapshot()
    object_id = entry.project_id if "projects" in path else entry.ticket_id if "tickets" in path else entry.id
    response = getattr(anonymous, method)(path.format(object_id), {"minutes": 5})
    assert (response.status_code, response.json()) == (401, {
        "code": "unauthenticated", "error": "Authentication credentials were not provided."})
    assert snapshot() == before


@pytest.mark.parametrize(("method", "path", "message"), [
    *[(method, path, "ticket not found") for method, path in TICKET_ROUTES],
    *[(method, path, "time entry not found") for method, path in ENTRY_ROUTES],
])
def test_a_non_member_gets_the_answer_of_a_missing_id(client_for, outsider, entry, method, path, message):
    before = snapshot()
    api = client_for(outsider)
    object_id = entry.ticket_id if "tickets" in path else entry.id
    existing = getattr(api, method)(path.format(object_id), {"minutes": 5})
    missing = getattr(api, method)(path.format(MISSING), {"minutes": 5})
    assert (existing.status_code, existing.json()) == (missing.status_code, missing.json()) == (
        404, {"code": "not_found", "error": message})
    assert snapshot() == before


def test_a_non_member_is_refused_before_the_role_and_the_body(client_for, member_with, outsider, entry):
    """404 before 403 before 422: an outsider's bad body on someone's entry still reads as a missing id."""
    assert client_for(outsider).post(entry_url(entry, "update"), {"minutes": 0}).status_code == 404
    assert client_for(member_with("editor")).post(entry_url(entry, "update"), {"minutes": 0}).status_code == 403


@pytest.mark.parametrize(("method", "path"), [*TICKET_ROUTES, *ENTRY_ROUTES])
def test_the_entries_of_a_deleted_ticket_are_404(client_for, manager, ticket, entry, method, path):
    ticket.deleted_at = timezone.now()
    ticket.save()
    before = snapshot()
    response = getattr(client_for(manager), method)(path.format(ticket.id if "tickets" in path else entry.id),
                                                    {"minutes": 5})
    message = "ticket not found" if "tickets" in path else "time entry not found"
    assert (response.status_code, response.json()) == (404, {"code": "not_found", "error": message})
    assert snapshot() == before


class TestRunningAndActive:
    def test_nothing_running(self, client_for, editor, ticket):
        TimeEntryFactory(ticket=ticket, user=editor)  # stopped
        api = client_for(editor)
        assert api.get(RUNNING_URL).json() == {"success": True, "entry": None}
        assert api.get(ACTIVE_URL).json() == {"success": True, "entries": []}

    def test_the_running_timer_comes_before_the_paused_ones(self, client_for, editor, project, ticket, clock):
        api = client_for(editor)
        first, second, third = ticket, TicketFactory(project=project), TicketFactory(project=project)
        older = api.post(f"/api/v1/tickets/{first.id}/time-entries/start").json()["entry"]["id"]
        clock.advance(minutes=3)
        api.post(entry_url(older, "pause"))
        clock.advance(minutes=1)
        newer = api.post(f"/api/v1/tickets/{second.id}/time-entries/start").json()["entry"]["id"]
        clock.advance(minutes=1)
        api.post(entry_url(newer, "pause"))
        assert api.get(RUNNING_URL).json()["entry"]["id"] == newer  # no running timer: the last paused

        clock.advance(minutes=1)
        running = api.post(f"/api/v1/tickets/{third.id}/time-entries/start").json()["entry"]["id"]

        assert api.get(RUNNING_URL).json() == {"success": True, "entry": timer_shape(
            running, third, minutes=0, is_running=1, started_at="2025-03-10 09:06:00")}
        assert api.get(ACTIVE_URL).json() == {"success": True, "entries": [
            timer_shape(running, third, minutes=0, is_running=1, started_at="2025-03-10 09:06:00"),
            timer_shape(newer, second, minutes=1, is_running=2, started_at="2025-03-10 09:04:00"),
            timer_shape(older, first, minutes=3, is_running=2, started_at="2025-03-10 09:00:00"),
        ]}

    def test_across_projects_and_only_the_callers(self, client_for, editor, manager, ticket):
        elsewhere = ProjectFactory(name="Gemini", prefix="GEM")
        MembershipFactory(project=elsewhere, user=editor)
        theirs = TimeEntryFactory(ticket=TicketFactory(project=elsewhere), user=editor, seconds=0,
                                  is_running=TimerState.PAUSED, started_at=START)
        TimeEntryFactory(ticket=ticket, user=manager, seconds=0, is_running=TimerState.RUNNING, started_at=START)
        entries = client_for(editor).get(ACTIVE_URL).json()["entries"]
        assert [(entry["id"], entry["project_name"], entry["ticket_ref"]) for entry in entries] == [
            (theirs.id, "Gemini", f"GEM-{theirs.ticket.number}")]

    def test_a_former_member_no_longer_sees_the_timers_of_that_project(self, client_for, editor, project, ticket):
        TimeEntryFactory(ticket=ticket, user=editor, seconds=0, is_running=TimerState.RUNNING, started_at=START)
        project.memberships.filter(user=editor).delete()
        api = client_for(editor)
        assert (api.get(RUNNING_URL).json()["entry"], api.get(ACTIVE_URL).json()["entries"]) == (None, [])

    @pytest.mark.parametrize("size", [1, 12])
    @pytest.mark.parametrize("path", [RUNNING_URL, ACTIVE_URL])
    def test_a_fixed_number_of_queries(self, client_for, editor, project, path, django_assert_max_num_queries, size):
        for _ in range(size):
            TimeEntryFactory(ticket=TicketFactory(project=project), user=editor, seconds=0,
                             is_running=TimerState.PAUSED, started_at=START)
        api = client_for(editor)
        with django_assert_max_num_queries(4):  # the same bound at both sizes
            assert api.get(path).status_code == 200


def test_the_schema_documents_every_route_with_its_errors(client, db):
    schema = client.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    paths = schema["paths"]
    start = paths["/api/v1/tickets/{ticket_id}/time-entries/start"]["post"]["responses"]
    assert {"200", "401", "404", "422"} <= set(start)
    assert {"200", "401", "403", "404", "422"} <= set(paths["/api/v1/time-entries/{entry_id}/update"]["post"]["responses"])
    report = paths["/api/v1/projects/{project_id}/time-report"]["get"]
    assert set(report["responses"]["200"]["content"]) == {"application/json", "text/csv"}
    assert {"from", "to", "group_by", "user_id", "format"} <= {parameter["name"] for parameter in report["parameters"]}
    csv_report = paths["/api/v1/projects/{project_id}/time-report.csv"]["get"]
    assert set(csv_report["responses"]["200"]["content"]) == {"text/csv"}  # one media type: generated clients cope
    assert {parameter["name"] for parameter in csv_report["parameters"]} == {
        "project_id", "from", "to", "group_by", "user_id"}
    for path in ["/api/v1/tickets/{ticket_id}/time-entries", "/api/v1/time-entries/{entry_id}/stop",
                 "/api/v1/time-entries/{entry_id}/pause", "/api/v1/time-entries/{entry_id}/resume",
                 "/api/v1/time-entries/{entry_id}/delete", "/api/v1/time-entries/running",
                 "/api/v1/time-entries/active"]:
        assert path in paths
