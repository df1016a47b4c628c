import pytest
from django.utils import timezone

from projects.roles import Role
from tests.factories import TicketFactory, UserFactory
from tickets.models import Activity, Ticket

from .conftest import status_of, ticket_url

EDITOR_LADDER = [(Role.VIEWER, 403), (Role.CONTRIBUTOR, 403), (Role.EDITOR, None), (Role.DEVELOPER, None),
                 (Role.MANAGER, None)]


class TestAssign:
    def test_assigns_a_member_once(self, client_for, editor, viewer, ticket, board_listener,
                                   django_capture_on_commit_callbacks):
        api = client_for(editor)
        with django_capture_on_commit_callbacks(execute=True):
            first = api.post(ticket_url(ticket, "assign"), {"user_id": viewer.id})
            again = api.post(ticket_url(ticket, "assign"), {"user_id": viewer.id})
        assert (first.status_code, first.json(), again.status_code, again.json()) == (
            201, {"ok": True}, 201, {"ok": True})
        assert list(ticket.assignees.all()) == [viewer]
        assert Activity.objects.get(ticket=ticket).changes == {"assignees": {"old": [], "new": [viewer.id]}}
        [frame] = board_listener.frames()
        assert frame["ticket"]["assignees"] == [{"id": viewer.id, "name": viewer.name, "avatar": None}]

    @pytest.mark.parametrize(("body", "error"), [
        ({}, "user_id is required"),
        ({"user_id": "me"}, "user_id: A valid integer is required."),
        ({"user_id": 424242}, "user_id: user is not a member of this project"),
    ])
    def test_invalid_user_is_422(self, client_for, editor, ticket, body, error):
        response = client_for(editor).post(ticket_url(ticket, "assign"), body)
        assert (response.status_code, response.json()["error"]) == (422, error)
        assert ticket.assignees.count() == 0

    def test_a_non_member_cannot_be_assigned(self, client_for, editor, outsider, ticket):
        response = client_for(editor).post(ticket_url(ticket, "assign"), {"user_id": outsider.id})
        assert response.json() == {
            "code": "validation_failed", "error": "user_id: user is not a member of this project", "field": "user_id"}
        assert ticket.assignees.count() == 0

    def test_archived_ticket_is_422(self, client_for, editor, viewer, project):
        ticket = TicketFactory(project=project, archived_at=timezone.now())
        assert client_for(editor).post(ticket_url(ticket, "assign"), {"user_id": viewer.id}).status_code == 422

    @pytest.mark.parametrize(("role", "expected"), EDITOR_LADDER)
    def test_role_ladder(self, client_for, member_with, manager, ticket, role, expected):
        response = client_for(member_with(role)).post(ticket_url(ticket, "assign"), {"user_id": manager.id})
        assert response.status_code == (expected or 201)

    def test_non_member_404_anonymous_401(self, client_for, anonymous, outsider, manager, ticket):
        assert client_for(outsider).post(ticket_url(ticket, "assign"), {"user_id": manager.id}).status_code == 404
        assert anonymous.post(ticket_url(ticket, "assign"), {"user_id": manager.id}).status_code == 401


class TestUnassign:
    def test_unassigns_and_tolerates_someone_not_assigned(self, client_for, editor, viewer, project):
        ticket = TicketFactory(project=project, assignees=[viewer, editor])
        api = client_for(editor)
        assert api.post(ticket_url(ticket, "unassign"), {"user_id": viewer.id}).json() == {"ok": True}
        assert list(ticket.assignees.all()) == [editor]
        response = api.post(ticket_url(ticket, "unassign"), {"user_id": viewer.id})
        assert (response.status_code, response.json()) == (200, {"ok": True})
        assert Activity.objects.filter(ticket=ticket, action="unassigned").count() == 1

    def test_a_former_member_can_be_unassigned(self, client_for, editor, project):
        former = UserFactory()
        ticket = TicketFactory(project=project, assignees=[former])
        assert client_for(editor).post(ticket_url(ticket, "unassign"), {"user_id": former.id}).status_code == 200
        assert ticket.assignees.count() == 0

    def test_missing_user_id_is_422(self, client_for, editor, ticket):
        assert client_for(editor).post(ticket_url(ticket, "unassign"), {}).json()["error"] == "user_id is required"

    @pytest.mark.parametrize(("role", "expected"), EDITOR_LADDER)
    def test_role_ladder(self, client_for, member_with, viewer, project, role, expected):
        ticket = TicketFactory(project=project, assignees=[viewer])
        response = client_for(member_with(role)).post(ticket_url(ticket, "unassign"), {"user_id": viewer.id})
        assert response.status_code == (expected or 200)
        assert ticket.assignees.exists() == bool(expected)


def sort_url(project):
    return f"/api/v1/projects/{project.id}/tickets/sort"


class TestSort:
    @pytest.fixture
    def column(self, project):
        todo = status_of(project, "todo")
        return [TicketFactory(project=project, status=todo, sort_order=index) for index in range(3)]

    def test_reorders_the_column(self, client_for, member_with, project, column, board_listener,
                                 django_capture_on_commit_callbacks):
        order = [column[2].id, column[0].id, column[1].id]
        with django_capture_on_commit_callbacks(execute=True):
            response = client_for(member_with(Role.CONTRIBUTOR)).post(
                sort_url(project), {"status": "todo", "ticket_ids": order})
        assert (response.status_code, response.json()) == (200, {"ok": True})
        assert list(Ticket.objects.filter(pk__in=order).order_by("sort_order").values_list("pk", flat=True)) == order
        [frame] = board_listener.frames()
        assert (frame["event"], frame["status"], frame["ticket_ids"]) == ("column.sorted", "todo", order)
        assert Activity.objects.filter(action="sorted").count() == 3

    @pytest.mark.parametrize("make_ids", [
        lambda column, other: [t.id for t in column[:2]],
        lambda column, other: [t.id for t in column] + [other.id],
        lambda column, other: [column[0].id, column[0].id, column[1].id, column[2].id],
        lambda column, other: [column[0].id, column[1].id, other.id],
    ], ids=["missing", "extra", "duplicate", "foreign"])
    def test_not_exactly_the_column_is_422(self, client_for, editor, project, column, make_ids):
        other = TicketFactory(project=project)  # backlog, not todo
        response = client_for(editor).post(sort_url(project), {"status": "todo", "ticket_ids": make_ids(column, other)})
        assert response.status_code == 422
        assert response.json() == {
            "code": "validation_failed", "error": "ticket_ids: must list exactly the tickets of the column, each once",
                                   "field": "ticket_ids"}
        assert [t.sort_order for t in Ticket.objects.filter(pk__in=[t.id for t in column]).order_by("id")] == [0, 1, 2]

    def test_archived_tickets_are_not_part_of_the_column(self, client_for, editor, project, column):
        TicketFactory(project=project, status=status_of(project, "todo"), archived_at=timezone.now())
        ids = [t.id for t in reversed(column)]
        assert client_for(editor).post(sort_url(project), {"status": "todo", "ticket_ids": ids}).status_code == 200

    @pytest.mark.parametrize(("body", "error"), [
        ({"ticket_ids": []}, "status is required"),
        ({"status": "todo"}, "ticket_ids is required"),
        ({"status": "nope", "ticket_ids": []}, "status: unknown status nope"),
        ({"status": "todo", "ticket_ids": "1,2"}, 'ticket_ids: Expected a list of items but got type "str".'),
    ])
    def test_invalid_body_is_422(self, client_for, editor, project, body, error):
        assert client_for(editor).post(sort_url(project), body).json()["error"] == error

    @pytest.mark.parametrize(("role", "expected"), [
        (Role.VIEWER, 403), (Role.CONTRIBUTOR, 200), (Role.EDITOR, 200), (Role.DEVELOPER, 200), (Role.MANAGER, 200)])
    def test_role_ladder(self, client_for, member_with, project, column, role, expected):
        ids = [t.id for t in reversed(column)]
        response = client_for(member_with(role)).post(sort_url(project), {"status": "todo", "ticket_ids": ids})
        assert response.status_code == expected

    def test_non_member_404_anonymous_401(self, client_for, anonymous, outsider, project):
        assert client_for(outsider).post(sort_url(project), {"status": "todo", "ticket_ids": []}).status_code == 404
        assert anonymous.post(sort_url(project), {"status": "todo", "ticket_ids": []}).status_code == 401


class TestHistory:
    def test_lists_entries_newest_first(self, client_for, editor, viewer, ticket):
        api = client_for(editor)
        api.post(ticket_url(ticket, "update"), {"title": "Renamed"})
        api.post(ticket_url(ticket, "move"), {"status": "todo"})

        response = client_for(viewer).get(ticket_url(ticket, "history"))

        assert response.status_code == 200
        history = response.json()["history"]
        assert [entry["action"] for entry in history] == ["moved", "updated"]
        moved = Activity.objects.get(action="moved")
        assert history[0] == {"id": moved.id, "action": "moved", "actor": {"id": editor.id, "name": editor.name},
                              "changes": {"status": {"old": "backlog", "new": "todo"},
                                          "sort_order": {"old": ticket.sort_order, "new": 0}},
                              "created_at": moved.created_at.strftime("%Y-%m-%d %H:%M:%S")}

    def test_fixed_query_count(self, client_for, editor, ticket, django_assert_max_num_queries):
        api = client_for(editor)
        for index in range(20):
            api.post(ticket_url(ticket, "update"), {"title": f"Title {index}"})
        with django_assert_max_num_queries(4):
            assert len(api.get(ticket_url(ticket, "history")).json()["history"]) == 20

    def test_non_member_404_anonymous_401(self, client_for, anonymous, outsider, ticket):
        assert client_for(outsider).get(ticket_url(ticket, "history")).status_code == 404
        assert anonymous.get(ticket_url(ticket, "history")).status_code == 401
