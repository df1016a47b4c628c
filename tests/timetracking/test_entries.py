"""A ticket's entries: the list, manual entries, updating and deleting them."""

from datetime import timedelta

import pytest

from projects.roles import Role
from tests.conftest import ROLES
from tests.factories import TicketFactory, TimeEntryFactory, UserFactory
from timetracking.models import TimeEntry, TimerState

from .conftest import START, entries_url, entry_url, history_of, listed_shape

BAD_MINUTES = [
    ({}, "minutes is required"),
    ({"minutes": None}, "minutes cannot be empty"),
    ({"minutes": 0}, "minutes: Ensure this value is greater than or equal to 1."),
    ({"minutes": -5}, "minutes: Ensure this value is greater than or equal to 1."),
    ({"minutes": "abc"}, "minutes: A valid integer is required."),
    ({"minutes": 1.5}, "minutes: A valid integer is required."),
    ({"minutes": 1_000_001}, "minutes: Ensure this value is less than or equal to 1000000."),
]
BAD_NOTES = [
    ({"minutes": 5, "note": "x" * 1001}, "note: Ensure this field has no more than 1000 characters."),
    ({"minutes": 5, "note": None}, "note cannot be empty"),
]


def entry_state(entry) -> tuple:
    return tuple(TimeEntry.objects.filter(pk=entry.pk).values_list("seconds", "note", "is_running").get())


class TestList:
    def test_every_users_entries_newest_first_with_the_total(self, client_for, viewer, editor, manager, ticket,
                                                             clock):
        editor.avatar_url = "https://example.com/e.png"
        editor.save()
        old = TimeEntryFactory(ticket=ticket, user=manager, seconds=90 * 60, note="design",
                               created_at=START - timedelta(days=2), started_at=START - timedelta(days=2),
                               stopped_at=START - timedelta(days=2, hours=-2))
        running = TimeEntryFactory(ticket=ticket, user=editor, seconds=125, is_running=TimerState.RUNNING,
                                   started_at=START, created_at=START - timedelta(hours=1))
        TimeEntryFactory(ticket=TicketFactory(project=ticket.project))  # another ticket's

        response = client_for(viewer).get(entries_url(ticket))

        assert (response.status_code, response.json()) == (200, {"success": True, "entries": [
            listed_shape(running.id, ticket, editor, minutes=2, is_running=1, started_at="2025-03-10 09:00:00"),
            listed_shape(old.id, ticket, manager, minutes=90, started_at="2025-03-08 09:00:00",
                         stopped_at="2025-03-08 11:00:00", note="design"),
        ], "total_minutes": 92})

    def test_no_entries(self, client_for, viewer, ticket):
        assert client_for(viewer).get(entries_url(ticket)).json() == {"success": True, "entries": [],
                                                                      "total_minutes": 0}

    @pytest.mark.parametrize("size", [2, 30])
    def test_a_fixed_number_of_queries(self, client_for, viewer, ticket, django_assert_max_num_queries, size):
        for _ in range(size):
            TimeEntryFactory(ticket=ticket, user=UserFactory())
        api = client_for(viewer)
        with django_assert_max_num_queries(5):
            assert len(api.get(entries_url(ticket)).json()["entries"]) == size

    @pytest.mark.parametrize("role", ROLES)
    def test_any_member_reads(self, client_for, member_with, ticket, role):
        assert client_for(member_with(role)).get(entries_url(ticket)).status_code == 200


class TestManualEntry:
    def test_adds_a_stopped_entry_without_timestamps(self, client_for, editor, ticket, clock):
        response = client_for(editor).post(entries_url(ticket), {"minutes": 45, "note": "call with client"})

        entry = TimeEntry.objects.get()
        assert (response.status_code, response.json()) == (200, {"success": True, "entry": listed_shape(
            entry.id, ticket, editor, minutes=45, note="call with client")})
        assert (entry.seconds, entry.is_running, entry.started_at, entry.stopped_at, entry.created_at) == (
            2700, 0, None, None, START)
        assert history_of(ticket) == [("time_added", editor.id, {"time_entry": {"old": None, "new": {
            "id": entry.id, "user_id": editor.id, "minutes": 45, "is_running": 0, "note": "call with client"}}})]

    def test_the_note_is_optional_and_one_thousand_characters_fit(self, client_for, editor, ticket):
        api = client_for(editor)
        assert api.post(entries_url(ticket), {"minutes": 1}).json()["entry"]["note"] == ""
        assert api.post(entries_url(ticket), {"minutes": "2", "note": "n" * 1000}).status_code == 200
        assert sorted(TimeEntry.objects.values_list("seconds", flat=True)) == [60, 120]

    def test_a_running_timer_does_not_prevent_it(self, client_for, editor, ticket):
        api = client_for(editor)
        api.post(f"{entries_url(ticket)}/start")
        assert api.post(entries_url(ticket), {"minutes": 5}).status_code == 200

    @pytest.mark.parametrize(("body", "error"), BAD_MINUTES + BAD_NOTES)
    def test_a_bad_body_is_422_naming_the_field_and_changes_nothing(self, client_for, editor, ticket, body, error):
        response = client_for(editor).post(entries_url(ticket), body)
        field = "note" if error.startswith("note") else "minutes"
        assert (response.status_code, response.json()) == (422, {
            "code": "validation_failed", "error": error, "field": field})
        assert (TimeEntry.objects.exists(), history_of(ticket)) == (False, [])

    @pytest.mark.parametrize("role", ROLES)
    def test_any_member_adds(self, client_for, member_with, ticket, role):
        assert client_for(member_with(role)).post(entries_url(ticket), {"minutes": 5}).status_code == 200
        assert TimeEntry.objects.count() == 1


# Who may update or delete an entry of a viewer: the viewer, or a manager; nobody else.
OWNER_OR_MANAGER = [("owner", 200), (Role.VIEWER, 403), (Role.CONTRIBUTOR, 403), (Role.EDITOR, 403),
                    (Role.DEVELOPER, 403), (Role.MANAGER, 200)]


@pytest.fixture
def owner(member_with):
    return member_with(Role.VIEWER)


@pytest.fixture
def stopped(ticket, owner):
    return TimeEntryFactory(ticket=ticket, user=owner, seconds=30 * 60, note="first pass", started_at=START,
                            stopped_at=START + timedelta(minutes=30), created_at=START)


class TestUpdate:
    def test_replaces_the_minutes_and_the_note(self, client_for, owner, ticket, stopped):
        response = client_for(owner).post(entry_url(stopped, "update"), {"minutes": 50, "note": "with review"})
        assert (response.status_code, response.json()) == (200, {"success": True, "entry": listed_shape(
            stopped.id, ticket, owner, minutes=50, started_at="2025-03-10 09:00:00",
            stopped_at="2025-03-10 09:30:00", note="with review")})
        assert entry_state(stopped) == (3000, "with review", 0)
        assert history_of(ticket) == [("time_edited", owner.id, {"time_entry": {
            "old": {"id": stopped.id, "user_id": owner.id, "minutes": 30, "is_running": 0, "note": "first pass"},
            "new": {"id": stopped.id, "user_id": owner.id, "minutes": 50, "is_running": 0, "note": "with review"}}})]

    def test_without_a_note_the_note_stays_and_an_empty_one_clears_it(self, client_for, owner, stopped):
        api = client_for(owner)
        api.post(entry_url(stopped, "update"), {"minutes": 40})
        assert entry_state(stopped) == (2400, "first pass", 0)
        api.post(entry_url(stopped, "update"), {"minutes": 40, "note": ""})
        assert entry_state(stopped) == (2400, "", 0)

    def test_the_same_values_record_nothing(self, client_for, owner, ticket, stopped):
        response = client_for(owner).post(entry_url(stopped, "update"), {"minutes": 30})
        assert (response.status_code, history_of(ticket)) == (200, [])

    def test_a_manual_entry_is_updated_too(self, client_for, owner, ticket):
        entry = TimeEntryFactory(ticket=ticket, user=owner)
        assert client_for(owner).post(entry_url(entry, "update"), {"minutes": 5}).json()["entry"]["minutes"] == 5

    @pytest.mark.parametrize("is_running", [TimerState.RUNNING, TimerState.PAUSED])
    def test_only_a_stopped_entry(self, client_for, owner, ticket, is_running):
        entry = TimeEntryFactory(ticket=ticket, user=owner, seconds=120, is_running=is_running, started_at=START)
        response = client_for(owner).post(entry_url(entry, "update"), {"minutes": 5})
        assert (response.status_code, response.json()) == (422, {"code": "validation_failed",
            "error": "only a stopped entry can be updated: stop the timer first"})
        assert (entry_state(entry), history_of(ticket)) == ((120, "", is_running), [])

    @pytest.mark.parametrize(("body", "error"), BAD_MINUTES + BAD_NOTES)
    def test_a_bad_body_is_422_naming_the_field_and_changes_nothing(self, client_for, owner, ticket, stopped, body,
                                                                   error):
        response = client_for(owner).post(entry_url(stopped, "update"), body)
        field = "note" if error.startswith("note") else "minutes"
        assert (response.status_code, response.json()) == (422, {
            "code": "validation_failed", "error": error, "field": field})
        assert (entry_state(stopped), history_of(ticket)) == ((1800, "first pass", 0), [])

    @pytest.mark.parametrize(("who", "expected"), OWNER_OR_MANAGER)
    def test_owner_or_manager(self, client_for, member_with, owner, stopped, who, expected):
        caller = owner if who == "owner" else member_with(who)
        response = client_for(caller).post(entry_url(stopped, "update"), {"minutes": 10})
        assert response.status_code == expected
        assert expected == 200 or response.json() == {
            "code": "forbidden", "error": "your role in this project does not allow this"}
        assert entry_state(stopped)[0] == (600 if expected == 200 else 1800)

    def test_the_project_owner_as_manager(self, client_for, manager, stopped):
        assert client_for(manager).post(entry_url(stopped, "update"), {"minutes": 10}).status_code == 200


class TestDelete:
    def test_removes_the_entry_and_records_it(self, client_for, owner, ticket, stopped):
        response = client_for(owner).post(entry_url(stopped, "delete"))
        assert (response.status_code, response.json()) == (200, {"success": True})
        assert not TimeEntry.objects.exists()
        assert history_of(ticket) == [("time_deleted", owner.id, {"time_entry": {"old": {
            "id": stopped.id, "user_id": owner.id, "minutes": 30, "is_running": 0, "note": "first pass"},
            "new": None}})]

    def test_deleting_a_running_timer_frees_the_slot(self, client_for, owner, project, ticket):
        api = client_for(owner)
        entry_id = api.post(f"{entries_url(ticket)}/start").json()["entry"]["id"]
        assert api.post(entry_url(entry_id, "delete")).status_code == 200
        assert api.post(f"{entries_url(TicketFactory(project=project))}/start").status_code == 200

    @pytest.mark.parametrize(("who", "expected"), OWNER_OR_MANAGER)
    def test_owner_or_manager(self, client_for, member_with, owner, stopped, who, expected):
        caller = owner if who == "owner" else member_with(who)
        response = client_for(caller).post(entry_url(stopped, "delete"))
        assert response.status_code == expected
        assert TimeEntry.objects.exists() == (expected != 200)
