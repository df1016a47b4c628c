"""Archive, unarchive, the archived list and (soft) delete."""

from datetime import timedelta

import pytest
from django.utils import timezone

from projects.roles import Role
from tests.factories import TagFactory, TicketFactory, UserFactory
from tickets.models import ChecklistItem, Ticket
from tickets.services.positions import GAP

from .conftest import status_of, ticket_url

EDITOR_LADDER = [(Role.VIEWER, 403), (Role.CONTRIBUTOR, 403), (Role.EDITOR, 200), (Role.DEVELOPER, 200),
                 (Role.MANAGER, 200)]


def archived_url(project, query=""):
    return f"/api/v1/projects/{project.id}/archived-tickets{query}"


class TestArchive:
    def test_archive_leaves_board_and_lists(self, client_for, editor, ticket, project, board_listener,
                                            django_capture_on_commit_callbacks):
        api = client_for(editor)
        with django_capture_on_commit_callbacks(execute=True):
            response = api.post(ticket_url(ticket, "archive"))
        assert (response.status_code, response.json()) == (200, {"ok": True})
        assert Ticket.objects.get(pk=ticket.pk).archived_at is not None
        assert api.get(f"/api/v1/projects/{project.id}/tickets").json()["tickets"] == []
        board = api.get(f"/api/v1/projects/{project.id}/board").json()
        assert all(column["tickets"] == [] for column in board["columns"])
        assert board_listener.events() == ["ticket.archived"]

    def test_archiving_twice_is_422(self, client_for, editor, ticket):
        client_for(editor).post(ticket_url(ticket, "archive"))
        assert client_for(editor).post(ticket_url(ticket, "archive")).status_code == 422

    @pytest.mark.parametrize(("role", "expected"), EDITOR_LADDER)
    def test_role_ladder(self, client_for, member_with, ticket, role, expected):
        assert client_for(member_with(role)).post(ticket_url(ticket, "archive")).status_code == expected
        assert (Ticket.objects.get(pk=ticket.pk).archived_at is not None) == (expected == 200)

    def test_non_member_404_anonymous_401(self, client_for, anonymous, outsider, ticket):
        assert client_for(outsider).post(ticket_url(ticket, "archive")).status_code == 404
        assert anonymous.post(ticket_url(ticket, "archive")).status_code == 401


class TestUnarchive:
    def test_returns_the_ticket_back_at_the_end_of_its_column(self, client_for, manager, editor, project,
                                                              board_listener, django_capture_on_commit_callbacks):
        tag = TagFactory(project=project, name="ops", color="#000000")
        ticket = TicketFactory(project=project, status=status_of(project, "review"), archived_at=timezone.now(),
                               sort_order=0, tags=[tag], assignees=[editor])
        ChecklistItem.objects.create(ticket=ticket, text="a", done=True)
        TicketFactory(project=project, status=status_of(project, "review"), sort_order=3)

        with django_capture_on_commit_callbacks(execute=True):
            response = client_for(manager).post(ticket_url(ticket, "unarchive"))

        assert response.status_code == 200
        assert response.json() == {"ok": True, "ticket": {
            "id": ticket.id, "project_ticket_number": ticket.number, "prefix_ref": f"APL-{ticket.number}",
            "title": ticket.title, "status": "review", "type": "feature", "priority": None, "deadline": None,
            "tags": [{"id": tag.id, "name": "ops", "color": "#000000"}],
            "created_at": ticket.created_at.strftime("%Y-%m-%d %H:%M:%S"),
            "assignees": [{"id": editor.id, "name": editor.name, "avatar": None}],
            "creator": {"id": manager.id, "name": manager.name},
            "reaction_count": 0, "checklist_total": 1, "checklist_done": 1, "archived_at": None,
        }}
        ticket.refresh_from_db()
        assert (ticket.archived_at, ticket.sort_order) == (None, 3 + GAP)
        assert board_listener.events() == ["ticket.unarchived"]

    @pytest.mark.parametrize(("role", "expected"), [
        (Role.VIEWER, 403), (Role.CONTRIBUTOR, 403), (Role.EDITOR, 403), (Role.DEVELOPER, 403),
        (Role.MANAGER, 200)])
    def test_only_managers(self, client_for, member_with, project, role, expected):
        ticket = TicketFactory(project=project, archived_at=timezone.now())
        assert client_for(member_with(role)).post(ticket_url(ticket, "unarchive")).status_code == expected
        assert (Ticket.objects.get(pk=ticket.pk).archived_at is None) == (expected == 200)

    def test_unarchiving_an_active_ticket_changes_nothing(self, client_for, manager, ticket):
        response = client_for(manager).post(ticket_url(ticket, "unarchive"))
        assert response.status_code == 200 and response.json()["ticket"]["archived_at"] is None


class TestArchivedList:
    def test_newest_archived_first_with_role_and_exact_shape(self, client_for, project, viewer):
        now = timezone.now()
        older = TicketFactory(project=project, archived_at=now - timedelta(days=2), title="Older", story_points=1)
        newer = TicketFactory(project=project, archived_at=now - timedelta(days=1), title="Newer")
        TicketFactory(project=project)
        TicketFactory(project=project, archived_at=now, deleted_at=now)

        response = client_for(viewer).get(archived_url(project))

        assert response.status_code == 200
        body = response.json()
        assert (body["success"], body["role"]) == (True, "viewer")
        assert [t["id"] for t in body["tickets"]] == [newer.id, older.id]
        assert body["tickets"][1] == {
            "id": older.id, "project_id": project.id, "project_ticket_number": older.number,
            "prefix_ref": f"APL-{older.number}", "title": "Older", "type": "feature", "status": "backlog",
            "priority": None, "deadline": None, "story_points": 1, "estimated_hours": None,
            "sort_order": older.sort_order, "archived_at": older.archived_at.strftime("%Y-%m-%d %H:%M:%S"),
            "created_by": older.created_by_id,
        }

    def test_title_filter_is_case_insensitive_and_needs_two_characters(self, client_for, project, viewer):
        login = TicketFactory(project=project, archived_at=timezone.now(), title="Login broken")
        TicketFactory(project=project, archived_at=timezone.now(), title="Slow search")
        api = client_for(viewer)
        assert [t["id"] for t in api.get(archived_url(project, "?q=LOGIN")).json()["tickets"]] == [login.id]
        assert len(api.get(archived_url(project, "?q=l")).json()["tickets"]) == 2

    def test_at_most_100(self, client_for, project, viewer, django_assert_max_num_queries):
        for _ in range(105):
            TicketFactory(project=project, archived_at=timezone.now())
        api = client_for(viewer)
        api.get(archived_url(project))
        with django_assert_max_num_queries(3):
            assert len(api.get(archived_url(project)).json()["tickets"]) == 100

    def test_non_member_404_anonymous_401(self, client_for, anonymous, outsider, project):
        assert client_for(outsider).get(archived_url(project)).status_code == 404
        assert anonymous.get(archived_url(project)).status_code == 401


class TestDelete:
    def test_creator_deletes_their_ticket_and_it_is_gone_everywhere(self, client_for, member_with, project,
                                                                    board_listener,
                                                                    django_capture_on_commit_callbacks):
        editor = member_with(Role.EDITOR)
        ticket = TicketFactory(project=project, created_by=editor)
        api = client_for(editor)
        with django_capture_on_commit_callbacks(execute=True):
            response = api.post(ticket_url(ticket, "delete"))
        assert (response.status_code, response.json()) == (200, {"ok": True})
        assert Ticket.objects.get(pk=ticket.pk).deleted_at is not None
        for url in (ticket_url(ticket), ticket_url(ticket, "history")):
            assert api.get(url).status_code == 404
        for action in ("update", "move", "archive", "delete", "assign"):
            assert api.post(ticket_url(ticket, action), {"title": "x", "status": "todo", "user_id": 1}).status_code == 404
        assert api.get(f"/api/v1/projects/{project.id}/tickets").json()["tickets"] == []
        assert board_listener.events() == ["ticket.deleted"]

    def test_archived_tickets_can_be_deleted(self, client_for, manager, project):
        ticket = TicketFactory(project=project, archived_at=timezone.now())
        assert client_for(manager).post(ticket_url(ticket, "delete")).status_code == 200
        assert client_for(manager).get(archived_url(project)).json()["tickets"] == []

    @pytest.mark.parametrize(("role", "expected"), [
        (Role.VIEWER, 403), (Role.CONTRIBUTOR, 403), (Role.EDITOR, 403), (Role.DEVELOPER, 403),
        (Role.MANAGER, 200)])
    def test_someone_elses_ticket_needs_a_manager(self, client_for, member_with, ticket, role, expected):
        assert client_for(member_with(role)).post(ticket_url(ticket, "delete")).status_code == expected
        assert (Ticket.objects.get(pk=ticket.pk).deleted_at is not None) == (expected == 200)

    def test_a_creator_who_is_now_a_viewer_may_still_delete(self, client_for, member_with, project):
        viewer = member_with(Role.VIEWER)
        ticket = TicketFactory(project=project, created_by=viewer)
        assert client_for(viewer).post(ticket_url(ticket, "delete")).status_code == 200

    def test_a_creator_who_left_the_project_gets_404(self, client_for, project):
        former = UserFactory()
        ticket = TicketFactory(project=project, created_by=former)
        assert client_for(former).post(ticket_url(ticket, "delete")).status_code == 404
        assert Ticket.objects.get(pk=ticket.pk).deleted_at is None


def test_a_missing_ticket_is_404_even_with_a_bad_body(client_for, editor, project):
    api = client_for(editor)
    for action in ("update", "move", "assign", "unassign"):
        response = api.post(f"/api/v1/projects/{project.id}/tickets/999/{action}", {"title": "", "status": "?"})
        assert (response.status_code, response.json()) == (404, {"code": "not_found", "error": "ticket not found"})
