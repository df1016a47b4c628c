"""The project time report: sums of entries made through the API, by user, ticket and day, as JSON and CSV."""

import csv
import io
from datetime import UTC, datetime, timedelta

import pytest

from tests.conftest import ROLES
from tests.factories import MembershipFactory, ProjectFactory, TicketFactory, TimeEntryFactory, UserFactory
from timetracking.models import TimerState

from .conftest import entries_url, entry_url, start_url


def at(day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2025, 3, day, hour, minute, tzinfo=UTC)


def report_url(project, suffix: str = "", **params) -> str:
    query = "&".join(f"{key}={value}" for key, value in params.items())
    return f"/api/v1/projects/{project.id}/time-report{suffix}?{query}"


@pytest.fixture
def ada(manager):
    manager.name = "Ada"
    manager.save()
    return manager


@pytest.fixture
def bob(editor):
    editor.name = "Bob"
    editor.save()
    return editor


@pytest.fixture
def docs(project):
    return TicketFactory(project=project, title="Write docs")


def timer(api, ticket, clock, *, start: datetime, stop: datetime) -> None:
    clock.set(start)
    entry = api.post(start_url(ticket)).json()["entry"]["id"]
    clock.set(stop)
    assert api.post(entry_url(entry, "stop")).status_code == 200


def manual(api, ticket, clock, *, when: datetime, minutes: int) -> None:
    clock.set(when)
    assert api.post(entries_url(ticket), {"minutes": minutes}).status_code == 200


@pytest.fixture
def tracked(client_for, project, ticket, docs, ada, bob, clock):
    """Through the API, 10 to 12 March: Ada 60 + 15, Bob 20 + 45; and time that must not count."""
    as_ada, as_bob = client_for(ada), client_for(bob)
    timer(as_ada, ticket, clock, start=at(10, 9), stop=at(10, 10))
    manual(as_ada, docs, clock, when=at(10, 17), minutes=15)
    timer(as_bob, docs, clock, start=at(11, 23, 50), stop=at(12, 0, 10))  # counts on the day it stopped
    manual(as_bob, ticket, clock, when=at(12, 8), minutes=45)

    manual(as_ada, ticket, clock, when=at(9, 23, 59), minutes=600)  # the day before the range
    manual(as_ada, ticket, clock, when=at(13, 0, 0), minutes=600)  # the day after
    clock.set(at(12, 9))
    as_bob.post(start_url(ticket))  # running: not counted
    paused = as_ada.post(start_url(docs)).json()["entry"]["id"]
    clock.set(at(12, 10))
    as_ada.post(entry_url(paused, "pause"))  # paused: not counted
    gone = TicketFactory(project=project, title="Deleted later")
    manual(as_ada, gone, clock, when=at(11, 12), minutes=300)
    as_ada.post(f"/api/v1/projects/{project.id}/tickets/{gone.number}/delete")
    TimeEntryFactory(ticket=TicketFactory(project=ProjectFactory()), user=ada, created_at=at(11, 12))
    as_ada.post(f"/api/v1/projects/{project.id}/tickets/{docs.number}/archive")  # archived still counts
    clock.set(at(20, 12))


RANGE = {"from": "2025-03-10", "to": "2025-03-12"}


class TestSums:
    def test_by_user_most_minutes_first(self, client_for, project, ada, bob, tracked):
        response = client_for(bob).get(report_url(project, **RANGE))
        assert (response.status_code, response.json()) == (200, {
            "success": True, "from": "2025-03-10", "to": "2025-03-12", "group_by": "user",
            "rows": [{"user_id": ada.id, "user_name": "Ada", "minutes": 75},
                     {"user_id": bob.id, "user_name": "Bob", "minutes": 65}],
            "total_minutes": 140})

    def test_by_ticket_most_minutes_first(self, client_for, project, ticket, docs, tracked):
        response = client_for(ticket.project.owner).get(report_url(project, group_by="ticket", **RANGE))
        assert response.json()["rows"] == [
            {"ticket_id": ticket.id, "ticket_ref": ticket.prefix_ref, "title": "Fix login", "minutes": 105},
            {"ticket_id": docs.id, "ticket_ref": docs.prefix_ref, "title": "Write docs", "minutes": 35}]
        assert response.json()["total_minutes"] == 140

    def test_by_day_every_day_of_the_range(self, client_for, project, ada, tracked):
        response = client_for(ada).get(report_url(project, group_by="day", **{"from": "2025-03-08", "to": "2025-03-13"}))
        assert response.json()["rows"] == [
            {"date": "2025-03-08", "minutes": 0}, {"date": "2025-03-09", "minutes": 600},
            {"date": "2025-03-10", "minutes": 75}, {"date": "2025-03-11", "minutes": 0},
            {"date": "2025-03-12", "minutes": 65}, {"date": "2025-03-13", "minutes": 600}]
        assert response.json()["total_minutes"] == 1340

    def test_the_total_is_what_the_ticket_lists_show(self, client_for, project, ticket, docs, ada, tracked):
        """Everything stopped on the two live tickets lies in 9 to 13 March."""
        api = client_for(ada)
        listed = sum(entry["minutes"] for each in (ticket, docs) for entry in api.get(entries_url(each)).json()["entries"]
                     if entry["is_running"] == 0)
        assert api.get(report_url(project, **{"from": "2025-03-09", "to": "2025-03-13"})).json()["total_minutes"] == (
            listed)

    def test_one_users_entries(self, client_for, project, ada, bob, tracked):
        response = client_for(ada).get(report_url(project, group_by="day", user_id=bob.id, **RANGE))
        assert [row["minutes"] for row in response.json()["rows"]] == [0, 0, 65]

    def test_equal_minutes_are_ordered_by_name_whatever_its_case(self, client_for, project, ticket, clock):
        zoe, amy = (MembershipFactory(project=project, user=UserFactory(name=name)).user for name in ("Zoe", "amy"))
        for user in (zoe, amy):
            manual(client_for(user), ticket, clock, when=at(10, 9), minutes=30)
        rows = client_for(zoe).get(report_url(project, **RANGE)).json()["rows"]
        assert [(row["user_name"], row["minutes"]) for row in rows] == [("amy", 30), ("Zoe", 30)]

    def test_defaults_to_the_thirty_days_up_to_today_by_user(self, client_for, project, manager, ticket, clock):
        clock.set(at(10, 12))
        TimeEntryFactory(ticket=ticket, user=manager, created_at=at(10, 12) - timedelta(days=29))
        TimeEntryFactory(ticket=ticket, user=manager, created_at=at(10, 12) - timedelta(days=30))
        body = client_for(manager).get(report_url(project)).json()
        assert (body["from"], body["to"], body["group_by"], body["total_minutes"]) == (
            "2025-02-09", "2025-03-10", "user", 30)
        assert len(client_for(manager).get(report_url(project, group_by="day")).json()["rows"]) == 30

    def test_nothing_tracked(self, client_for, project, manager):
        body = client_for(manager).get(report_url(project, **RANGE)).json()
        assert (body["rows"], body["total_minutes"]) == ([], 0)


class TestCsv:
    def test_a_download_with_a_header_row_of_the_row_keys(self, client_for, project, ticket, docs, ada, tracked):
        response = client_for(ada).get(report_url(project, group_by="ticket", format="csv", **RANGE))
        assert response.status_code == 200
        assert response["Content-Type"] == "text/csv; charset=utf-8"
        assert response["Content-Disposition"] == 'attachment; filename="APL-time-2025-03-10-2025-03-12.csv"'
        assert list(csv.reader(io.StringIO(response.content.decode("utf-8")))) == [
            ["ticket_id", "ticket_ref", "title", "minutes"],
            [str(ticket.id), ticket.prefix_ref, "Fix login", "105"],
            [str(docs.id), docs.prefix_ref, "Write docs", "35"]]

    @pytest.mark.parametrize("group_by", ["user", "ticket", "day"])
    def test_the_same_rows_as_the_json(self, client_for, project, ada, tracked, group_by):
        api = client_for(ada)
        rows = api.get(report_url(project, group_by=group_by, **RANGE)).json()["rows"]
        download = api.get(report_url(project, group_by=group_by, format="csv", **RANGE))
        assert list(csv.DictReader(io.StringIO(download.content.decode("utf-8")))) == [
            {key: str(value) for key, value in row.items()} for row in rows]

    def test_an_empty_report_still_has_its_header(self, client_for, project, manager):
        response = client_for(manager).get(report_url(project, format="csv", **RANGE))
        assert response.content.decode() == "user_id,user_name,minutes\r\n"

    def test_a_cell_a_spreadsheet_would_run_as_a_formula_is_kept_as_text(self, client_for, project, manager):
        ticket = TicketFactory(project=project, title='=HYPERLINK("http://evil.example","x")')
        TimeEntryFactory(ticket=ticket, user=manager, created_at=at(10, 9))
        response = client_for(manager).get(report_url(project, group_by="ticket", format="csv", **RANGE))
        assert list(csv.reader(io.StringIO(response.content.decode())))[1][2] == (
            '\'=HYPERLINK("http://evil.example","x")')

    @pytest.mark.parametrize("group_by", ["user", "ticket", "day"])
    def test_its_own_operation_answers_the_same_download(self, client_for, project, ada, tracked, group_by):
        api = client_for(ada)
        by_format = api.get(report_url(project, group_by=group_by, format="csv", **RANGE))
        by_path = api.get(report_url(project, ".csv", group_by=group_by, **RANGE))

        assert (by_path.status_code, by_path.content) == (200, by_format.content)
        assert by_path["Content-Type"] == by_format["Content-Type"] == "text/csv; charset=utf-8"
        assert by_path["Content-Disposition"] == by_format["Content-Disposition"]

    @pytest.mark.parametrize(("suffix", "params"), [("", {"format": "csv"}), (".csv", {})])
    def test_errors_stay_json(self, client_for, outsider, project, manager, suffix, params):
        bad = client_for(manager).get(report_url(project, suffix, group_by="week", **params))
        assert (bad.status_code, bad["Content-Type"], bad.json()) == (422, "application/json", {
            "code": "validation_failed",
            "error": 'group_by: "week" is not a valid choice.', "field": "group_by"})
        hidden = client_for(outsider).get(report_url(project, suffix, **params))
        assert (hidden.status_code, hidden.json()) == (404, {"code": "not_found", "error": "project not found"})


@pytest.mark.parametrize(("params", "error", "field"), [
    ({"from": "2025-03-12", "to": "2025-03-10"}, "from: must not be after to", "from"),
    ({"from": "2024-03-09", "to": "2025-03-10"}, "from: the range covers at most 366 days", "from"),
    ({"from": "2025-13-01"}, "from: Date has wrong format. Use one of these formats instead: YYYY-MM-DD.", "from"),
    ({"to": "10/03/2025"}, "to: Date has wrong format. Use one of these formats instead: YYYY-MM-DD.", "to"),
    ({"group_by": "week"}, 'group_by: "week" is not a valid choice.', "group_by"),
    # Days whose range would leave the calendar (the day after `to`, the 29 days before it).
    ({"to": "9999-12-31"}, "to: Ensure this value is less than or equal to 9999-12-30.", "to"),
    ({"to": "0001-01-01"}, "to: Ensure this value is greater than or equal to 1970-01-01.", "to"),
    ({"from": "0001-01-01", "to": "0001-01-02"}, "from: Ensure this value is greater than or equal to 1970-01-01.",
     "from"),
    ({"from": "9999-12-31"}, "from: Ensure this value is less than or equal to 9999-12-30.", "from"),
    ({"user_id": "x"}, "user_id: A valid integer is required.", "user_id"),
    ({"format": "xml"}, 'format: "xml" is not a valid choice.', "format"),
])
def test_bad_parameters_are_422_naming_the_field(client_for, project, manager, clock, params, error, field):
    response = client_for(manager).get(report_url(project, **params))
    assert (response.status_code, response.json()) == (422, {
        "code": "validation_failed", "error": error, "field": field})


@pytest.mark.parametrize(("params", "first", "last"), [
    ({"to": "9999-12-30"}, "9999-12-01", "9999-12-30"),
    ({"to": "1970-01-05"}, "1970-01-01", "1970-01-05"),  # the default `from` stops at the first day
])
def test_the_edges_of_the_calendar_answer(client_for, project, manager, params, first, last):
    response = client_for(manager).get(report_url(project, group_by="day", **params))
    assert response.status_code == 200
    assert (response.json()["from"], response.json()["to"]) == (first, last)
    assert (response.json()["rows"][0]["date"], response.json()["rows"][-1]["date"]) == (first, last)


def test_a_leap_year_of_days_is_allowed(client_for, project, manager):
    response = client_for(manager).get(report_url(project, group_by="day", **{"from": "2024-01-01", "to": "2024-12-31"}))
    assert (response.status_code, len(response.json()["rows"])) == (200, 366)


@pytest.mark.parametrize("role", ROLES)
def test_any_member_reads_it(client_for, member_with, project, role):
    assert client_for(member_with(role)).get(report_url(project)).status_code == 200


@pytest.mark.parametrize("group_by", ["user", "ticket", "day"])
@pytest.mark.parametrize("size", [3, 40])
def test_a_fixed_number_of_queries(client_for, project, manager, django_assert_max_num_queries, group_by, size,
                                   clock):
    for index in range(size):
        member = MembershipFactory(project=project).user
        TimeEntryFactory(ticket=TicketFactory(project=project), user=member, created_at=at(1 + index % 10, 9),
                         stopped_at=at(1 + index % 10, 10) if index % 2 else None, started_at=None)
    TimeEntryFactory(ticket=TicketFactory(project=project), user=manager, is_running=TimerState.RUNNING)
    api = client_for(manager)
    with django_assert_max_num_queries(4):  # the token (2), the membership, the aggregate: at both sizes
        response = api.get(report_url(project, group_by=group_by, **{"from": "2025-03-01", "to": "2025-03-10"}))
    assert response.json()["total_minutes"] == size * 30
