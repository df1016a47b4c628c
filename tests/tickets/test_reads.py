"""List, detail, board and history: exact shapes, access, and fixed query counts."""

from datetime import date, timedelta
from datetime import timezone as dt_timezone

import pytest
from django.db import connection
from django.utils import timezone

from projects.roles import Role
from tests.factories import StatusFactory, TagFactory, TicketFactory, UserFactory
from tickets.models import Attachment, Blocker, ChecklistItem, Comment

from .conftest import status_of, ticket_url


def ts(moment) -> str:
    return moment.astimezone(dt_timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def list_url(project, query=""):
    return f"/api/v1/projects/{project.id}/tickets{query}"


def fill_project(project, count: int, member):
    """Tickets with tags, assignees, comments and checklist items: what makes naive queries grow."""
    tags = [TagFactory(project=project) for _ in range(3)]
    for index in range(count):
        ticket = TicketFactory(project=project, tags=tags[: index % 4], assignees=[member] if index % 2 else [])
        ChecklistItem.objects.create(ticket=ticket, text="step", done=index % 3 == 0)
        Comment.objects.create(ticket=ticket, author=member, message="hi")


class TestList:
    def test_exact_shape_in_column_order(self, client_for, project, viewer):
        tag = TagFactory(project=project, name="ui", color="#112233")
        second = TicketFactory(project=project, sort_order=2, title="Second", type="bug", priority="high",
                               deadline=date(2027, 3, 1), tags=[tag])
        first = TicketFactory(project=project, sort_order=1, title="First")

        response = client_for(viewer).get(list_url(project))

        assert response.status_code == 200
        assert response.json() == {"tickets": [
            {"id": first.id, "project_ticket_number": first.number, "prefix_ref": f"APL-{first.number}",
             "title": "First", "status": "backlog", "type": "feature", "priority": None, "deadline": None,
             "tags": [], "created_at": ts(first.created_at)},
            {"id": second.id, "project_ticket_number": second.number, "prefix_ref": f"APL-{second.number}",
             "title": "Second", "status": "backlog", "type": "bug", "priority": "high", "deadline": "2027-03-01",
             "tags": [{"id": tag.id, "name": "ui", "color": "#112233"}], "created_at": ts(second.created_at)},
        ]}

    def test_excludes_archived_deleted_and_other_projects(self, client_for, project, viewer):
        kept = TicketFactory(project=project)
        TicketFactory(project=project, archived_at=timezone.now())
        TicketFactory(project=project, deleted_at=timezone.now())
        TicketFactory()
        assert [t["id"] for t in client_for(viewer).get(list_url(project)).json()["tickets"]] == [kept.id]

    def test_status_filter(self, client_for, project, viewer):
        TicketFactory(project=project)
        todo = TicketFactory(project=project, status=status_of(project, "todo"))
        response = client_for(viewer).get(list_url(project, "?status=todo"))
        assert [t["id"] for t in response.json()["tickets"]] == [todo.id]

    def test_unknown_status_filter_is_422(self, client_for, project, viewer):
        response = client_for(viewer).get(list_url(project, "?status=nope"))
        assert response.status_code == 422
        assert response.json() == {
            "code": "validation_failed", "error": "status: unknown status nope", "field": "status"}

    @pytest.mark.parametrize("role", list(Role))
    def test_every_member_reads(self, client_for, project, member_with, role):
        assert client_for(member_with(role)).get(list_url(project)).status_code == 200

    def test_non_member_404_and_anonymous_401(self, client_for, anonymous, project, outsider):
        assert client_for(outsider).get(list_url(project)).status_code == 404
        assert anonymous.get(list_url(project)).status_code == 401

    def test_fixed_query_count(self, client_for, project, editor, django_assert_max_num_queries):
        api = client_for(editor)
        api.get(list_url(project))  # the token's first use is written once
        fill_project(project, 10, editor)
        with django_assert_max_num_queries(5):  # token, membership, tickets, their tag ids, those tags
            assert len(api.get(list_url(project)).json()["tickets"]) == 10
        fill_project(project, 190, editor)
        with django_assert_max_num_queries(5):
            assert len(api.get(list_url(project)).json()["tickets"]) == 200


class TestDetail:
    def test_exact_shape(self, client_for, project, manager, viewer):
        tag = TagFactory(project=project, name="api", color="#abcdef")
        assignee = UserFactory(name="Ann")
        ticket = TicketFactory(project=project, title="Detailed", description="Long text", type="bug",
                               priority="low", deadline=date(2027, 1, 2), story_points=2, tags=[tag],
                               assignees=[assignee])
        comment = Comment.objects.create(ticket=ticket, author=viewer, message="Looks bad")
        Comment.objects.create(ticket=ticket, author=viewer, message="gone", deleted_at=timezone.now())
        item = ChecklistItem.objects.create(ticket=ticket, text="Reproduce", done=True)
        blocker = TicketFactory(project=project, title="Blocker", status=status_of(project, "todo"))
        Blocker.objects.create(ticket=ticket, blocker=blocker)
        attachment = Attachment.objects.create(ticket=ticket, file="attachments/x.png", original_name="shot.png",
                                               filesize=10, mime_type="image/png", uploaded_by=manager)
        ticket.refresh_from_db()

        response = client_for(viewer).get(ticket_url(ticket))

        assert response.status_code == 200
        assert response.json() == {"ticket": {
            "id": ticket.id, "project_ticket_number": ticket.number, "prefix_ref": f"APL-{ticket.number}",
            "title": "Detailed", "status": "backlog", "type": "bug", "priority": "low", "deadline": "2027-01-02",
            "tags": [{"id": tag.id, "name": "api", "color": "#abcdef"}], "created_at": ts(ticket.created_at),
            "description": "Long text", "story_points": 2, "estimated_hours": None,
            "updated_at": ts(ticket.updated_at),
            "comments": [{"id": comment.id, "message": "Looks bad", "user_id": viewer.id,
                          "user_name": viewer.name, "created_at": ts(comment.created_at)}],
            "checklist": [{"id": item.id, "text": "Reproduce", "done": 1}],
            "assignees": [{"id": assignee.id, "name": "Ann"}],
            "creator": {"id": manager.id, "name": manager.name},
            "blockers": [{"id": blocker.id, "title": "Blocker", "status": "todo",
                          "project_ticket_number": blocker.number}],
            "attachments": [{"id": attachment.id, "ticket_id": ticket.id, "original_name": "shot.png",
                             "filesize": 10, "mime_type": "image/png"}],
            "archived_at": None,
        }}

    def test_archived_ticket_is_readable(self, client_for, project, viewer):
        ticket = TicketFactory(project=project, archived_at=timezone.now())
        body = client_for(viewer).get(ticket_url(ticket)).json()["ticket"]
        assert body["archived_at"] == ts(ticket.archived_at)

    def test_deleted_missing_and_foreign_tickets_are_404(self, client_for, project, viewer):
        deleted = TicketFactory(project=project, deleted_at=timezone.now())
        foreign = TicketFactory()
        api = client_for(viewer)
        for url in (ticket_url(deleted), f"/api/v1/projects/{project.id}/tickets/9999",
                    f"/api/v1/projects/{project.id}/tickets/{foreign.number + 100}"):
            assert (api.get(url).status_code, api.get(url).json()) == (404, {
                "code": "not_found", "error": "ticket not found"})
        assert api.get(ticket_url(foreign)).status_code == 404  # its own project is not the caller's

    def test_non_member_404_and_anonymous_401(self, client_for, anonymous, ticket, outsider):
        assert client_for(outsider).get(ticket_url(ticket)).status_code == 404
        assert anonymous.get(ticket_url(ticket)).status_code == 401

    def test_a_non_member_learns_nothing_of_the_project_s_tickets(self, client_for, ticket, outsider):
        api = client_for(outsider)
        answers = [api.get(url) for url in (ticket_url(ticket), f"/api/v1/projects/{ticket.project_id}/tickets/9999",
                                            f"/api/v1/projects/{10**9}/tickets/{ticket.number}")]
        assert {(answer.status_code, answer.content) for answer in answers} == {
            (404, b'{"error":"project not found","code":"not_found"}')}

    @pytest.mark.direct_postgres
    @pytest.mark.skipif(connection.vendor != "postgresql", reason="pipelines: PostgreSQL")
    def test_membership_ticket_and_parts_come_in_one_round_trip(self, client_for, project, editor, pipelines,
                                                                      django_assert_num_queries):
        ticket = TicketFactory(project=project)
        api = client_for(editor)
        api.get(ticket_url(ticket))  # the token's first use is recorded
        pipelines.clear()
        with django_assert_num_queries(4):  # the token; membership, ticket, and its six parts in one statement
            assert api.get(ticket_url(ticket)).status_code == 200
        assert pipelines == [3]

    def test_fixed_query_count(self, client_for, project, manager, editor, django_assert_max_num_queries):
        ticket = TicketFactory(project=project)
        api = client_for(editor)
        api.get(ticket_url(ticket))
        for count in (1, 30):
            for _ in range(count):
                Comment.objects.create(ticket=ticket, author=UserFactory(), message="m")
                ChecklistItem.objects.create(ticket=ticket, text="t")
                Blocker.objects.create(ticket=ticket, blocker=TicketFactory(project=project))
                Attachment.objects.create(ticket=ticket, file="a/b.txt", original_name="b.txt", filesize=1,
                                          mime_type="text/plain", uploaded_by=manager)
                ticket.tags.add(TagFactory(project=project))
                ticket.assignees.add(UserFactory())
            with django_assert_max_num_queries(4):  # token, membership, ticket, parts
                api.get(ticket_url(ticket))


class TestBoard:
    def test_exact_shape(self, client_for, project, manager, editor):
        hidden = StatusFactory(project=project, slug="icebox", label="Icebox", category="backlog", hidden=True)
        tag = TagFactory(project=project, name="ui", color="#123456")
        editor.avatar_url = "https://example.com/e.png"
        editor.save()
        ticket = TicketFactory(project=project, status=status_of(project, "todo"), tags=[tag], assignees=[editor])
        ChecklistItem.objects.create(ticket=ticket, text="a", done=True)
        ChecklistItem.objects.create(ticket=ticket, text="b")
        Comment.objects.create(ticket=ticket, author=editor, message="one")
        Comment.objects.create(ticket=ticket, author=editor, message="two")
        Comment.objects.create(ticket=ticket, author=editor, message="gone", deleted_at=timezone.now())
        TicketFactory(project=project, archived_at=timezone.now())

        response = client_for(editor).get(f"/api/v1/projects/{project.id}/board")

        assert response.status_code == 200
        body = response.json()
        assert body["project"] == {"id": project.id, "name": "Apollo", "prefix": "APL",
                                   "estimation_mode": "story_points", "role": "editor", "docs_enabled": True}
        assert [(c["status"], c["hidden"], len(c["tickets"])) for c in body["columns"]] == [
            ("backlog", False, 0), ("todo", False, 1), ("in_progress", False, 0), ("review", False, 0),
            ("done", False, 0), ("icebox", True, 0)]
        assert hidden.slug == body["columns"][-1]["status"]
        assert body["columns"][1]["tickets"] == [{
            "id": ticket.id, "project_ticket_number": ticket.number, "prefix_ref": f"APL-{ticket.number}",
            "title": ticket.title, "status": "todo", "type": "feature", "priority": None, "deadline": None,
            "tags": [{"id": tag.id, "name": "ui", "color": "#123456"}], "created_at": ts(ticket.created_at),
            "assignees": [{"id": editor.id, "name": editor.name, "avatar": "https://example.com/e.png"}],
            "creator": {"id": manager.id, "name": manager.name},
            "reaction_count": 2, "checklist_total": 2, "checklist_done": 1,
        }]
        assert body["tags"] == [{"id": tag.id, "name": "ui", "color": "#123456", "sort_order": tag.sort_order}]
        assert {m["id"]: m["role"] for m in body["members"]} == {manager.id: "manager", editor.id: "editor"}
        assert body["velocity"] == 0

    def test_velocity_counts_tickets_done_in_the_last_7_days_still_done(self, client_for, project, viewer):
        done = status_of(project, "done")
        now = timezone.now()
        TicketFactory(project=project, status=done, done_at=now - timedelta(days=1))
        TicketFactory(project=project, status=done, done_at=now - timedelta(days=6, hours=23))
        TicketFactory(project=project, status=done, done_at=now - timedelta(days=8))
        TicketFactory(project=project, status=status_of(project, "review"), done_at=None)
        TicketFactory(project=project, status=done, done_at=now, deleted_at=now)
        assert client_for(viewer).get(f"/api/v1/projects/{project.id}/board").json()["velocity"] == 2

    def test_a_move_to_done_counts_and_a_move_out_uncounts(self, client_for, project, ticket, manager):
        api = client_for(manager)
        board = f"/api/v1/projects/{project.id}/board"
        api.post(ticket_url(ticket, "move"), {"status": "done"})
        assert api.get(board).json()["velocity"] == 1
        api.post(ticket_url(ticket, "move"), {"status": "review"})
        assert api.get(board).json()["velocity"] == 0

    def test_columns_follow_sort_order(self, client_for, project, viewer):
        late, early = TicketFactory(project=project, sort_order=5), TicketFactory(project=project, sort_order=1)
        column = client_for(viewer).get(f"/api/v1/projects/{project.id}/board").json()["columns"][0]
        assert [t["id"] for t in column["tickets"]] == [early.id, late.id]

    def test_non_member_404_and_anonymous_401(self, client_for, anonymous, project, outsider):
        assert client_for(outsider).get(f"/api/v1/projects/{project.id}/board").status_code == 404
        assert anonymous.get(f"/api/v1/projects/{project.id}/board").status_code == 401

    def test_fixed_query_count(self, client_for, project, editor, django_assert_max_num_queries):
        api = client_for(editor)
        url = f"/api/v1/projects/{project.id}/board"
        api.get(url)
        fill_project(project, 10, editor)
        # token, membership, statuses, tags, members, tickets, tag ids, assignee ids, velocity
        with django_assert_max_num_queries(9):
            api.get(url)
        fill_project(project, 190, editor)
        with django_assert_max_num_queries(9):
            columns = api.get(url).json()["columns"]
        assert sum(len(c["tickets"]) for c in columns) == 200
