"""Comments ("reactions"): add, edit, soft delete; history, board frames and ticket detail."""

import pytest
from django.utils import timezone

from projects.roles import Role
from tests.factories import TicketFactory
from tickets.models import Activity, Comment

from .conftest import ticket_url


def edit_url(comment) -> str:
    return f"/api/v1/reactions/{comment.id}/update"


def delete_url(comment) -> str:
    return f"/api/v1/reactions/{comment.id}/delete"


@pytest.fixture
def comment(ticket, editor):
    return Comment.objects.create(ticket=ticket, author=editor, message="First thought")


def detail_comments(client, ticket) -> list[dict]:
    return client.get(ticket_url(ticket)).json()["ticket"]["comments"]


class TestAdd:
    def test_adds_records_and_updates_the_board(self, client_for, viewer, ticket, board_listener,
                                                django_capture_on_commit_callbacks):
        api = client_for(viewer)
        with django_capture_on_commit_callbacks(execute=True):
            response = api.post(ticket_url(ticket, "comments"), {"comment": "Seen it too"})

        comment = Comment.objects.get()
        assert (response.status_code, response.json()) == (201, {"ok": True, "reaction_id": comment.id})
        assert (comment.ticket, comment.author, comment.message, comment.deleted_at) == (
            ticket, viewer, "Seen it too", None)
        assert [(c["id"], c["message"], c["user_id"], c["user_name"]) for c in detail_comments(api, ticket)] == [
            (comment.id, "Seen it too", viewer.id, viewer.name)]
        activity = Activity.objects.get(ticket=ticket)
        assert (activity.action, activity.actor, activity.changes) == (
            "commented", viewer, {"comment": {"old": None, "new": {"id": comment.id, "message": "Seen it too"}}})
        [frame] = board_listener.card_frames()
        assert (frame["event"], frame["ticket"]["id"], frame["ticket"]["reaction_count"]) == (
            "ticket.updated", ticket.id, 1)

    def test_twenty_thousand_characters_fit(self, client_for, editor, ticket):
        response = client_for(editor).post(ticket_url(ticket, "comments"), {"comment": "x" * 20_000})
        assert response.status_code == 201
        assert len(Comment.objects.get().message) == 20_000

    @pytest.mark.parametrize("role", list(Role))
    def test_every_member_may_comment(self, client_for, member_with, ticket, role):
        assert client_for(member_with(role)).post(ticket_url(ticket, "comments"), {"comment": "hi"}).status_code == 201

    @pytest.mark.parametrize(("body", "error"), [
        ({}, "comment is required"),
        ({"comment": ""}, "comment cannot be empty"),
        ({"comment": "  \n "}, "comment cannot be empty"),
        ({"comment": None}, "comment cannot be empty"),
        ({"comment": "x" * 20_001}, "comment: Ensure this field has no more than 20000 characters."),
    ])
    def test_invalid_body_is_422_and_changes_nothing(self, client_for, editor, ticket, board_listener,
                                                     django_capture_on_commit_callbacks, body, error):
        with django_capture_on_commit_callbacks(execute=True):
            response = client_for(editor).post(ticket_url(ticket, "comments"), body)
        assert (response.status_code, response.json()) == (422, {
            "code": "validation_failed", "error": error, "field": "comment"})
        assert (Comment.objects.exists(), Activity.objects.exists(), board_listener.frames()) == (False, False, [])

    def test_archived_ticket_is_422(self, client_for, editor, project, board_listener,
                                    django_capture_on_commit_callbacks):
        ticket = TicketFactory(project=project, archived_at=timezone.now())
        with django_capture_on_commit_callbacks(execute=True):
            response = client_for(editor).post(ticket_url(ticket, "comments"), {"comment": "late"})
        assert (response.status_code, response.json()) == (422, {
            "code": "validation_failed", "error": "ticket is archived: unarchive it first"})
        assert (Comment.objects.exists(), Activity.objects.exists(), board_listener.frames()) == (False, False, [])

    def test_missing_deleted_and_foreign_tickets_are_404(self, client_for, editor, project):
        deleted = TicketFactory(project=project, deleted_at=timezone.now())
        api = client_for(editor)
        for url in (ticket_url(deleted, "comments"), f"/api/v1/projects/{project.id}/tickets/999/comments",
                    ticket_url(TicketFactory(), "comments")):
            assert api.post(url, {"comment": "x"}).status_code == 404
        assert not Comment.objects.exists()

    def test_non_member_404_and_anonymous_401(self, client_for, anonymous, outsider, ticket):
        assert client_for(outsider).post(ticket_url(ticket, "comments"), {"comment": "x"}).status_code == 404
        assert anonymous.post(ticket_url(ticket, "comments"), {"comment": "x"}).status_code == 401
        assert not Comment.objects.exists()


class TestEdit:
    def test_author_edits_without_a_board_frame(self, client_for, editor, ticket, comment, board_listener,
                                                django_capture_on_commit_callbacks):
        api = client_for(editor)
        with django_capture_on_commit_callbacks(execute=True):
            response = api.post(edit_url(comment), {"message": "Second thought"})

        assert (response.status_code, response.json()) == (200, {"ok": True})
        assert Comment.objects.get().message == "Second thought"
        assert [c["message"] for c in detail_comments(api, ticket)] == ["Second thought"]
        activity = Activity.objects.get(ticket=ticket)
        assert (activity.action, activity.actor, activity.changes) == ("comment_edited", editor, {"comment": {
            "old": {"id": comment.id, "message": "First thought"},
            "new": {"id": comment.id, "message": "Second thought"}}})
        assert board_listener.card_frames() == []  # the board shows only how many comments there are

    def test_the_same_text_changes_nothing(self, client_for, editor, comment):
        assert client_for(editor).post(edit_url(comment), {"message": "First thought"}).status_code == 200
        assert not Activity.objects.exists()

    @pytest.mark.parametrize("role", list(Role))
    def test_only_the_author_whatever_the_role(self, client_for, member_with, comment, role):
        response = client_for(member_with(role)).post(edit_url(comment), {"message": "hijacked"})
        assert (response.status_code, response.json()) == (403, {
            "code": "forbidden", "error": "only its author can edit a comment"})
        assert Comment.objects.get().message == "First thought"

    @pytest.mark.parametrize(("body", "error"), [
        ({}, "message is required"),
        ({"message": " "}, "message cannot be empty"),
        ({"message": "x" * 20_001}, "message: Ensure this field has no more than 20000 characters."),
    ])
    def test_invalid_body_is_422_and_changes_nothing(self, client_for, editor, comment, body, error):
        response = client_for(editor).post(edit_url(comment), body)
        assert (response.status_code, response.json()) == (422, {
            "code": "validation_failed", "error": error, "field": "message"})
        assert (Comment.objects.get().message, Activity.objects.exists()) == ("First thought", False)

    def test_on_an_archived_ticket_is_422(self, client_for, editor, ticket, comment):
        ticket.archived_at = timezone.now()
        ticket.save()
        response = client_for(editor).post(edit_url(comment), {"message": "late"})
        assert (response.status_code, response.json()) == (422, {
            "code": "validation_failed", "error": "ticket is archived: unarchive it first"})
        assert Comment.objects.get().message == "First thought"

    def test_deleted_comment_deleted_ticket_and_missing_are_404(self, client_for, editor, project, ticket):
        gone = Comment.objects.create(ticket=ticket, author=editor, message="gone", deleted_at=timezone.now())
        on_deleted_ticket = Comment.objects.create(
            ticket=TicketFactory(project=project, deleted_at=timezone.now()), author=editor, message="m")
        api = client_for(editor)
        for url in (edit_url(gone), edit_url(on_deleted_ticket), "/api/v1/reactions/999999/update"):
            response = api.post(url, {"message": "new"})
            assert (response.status_code, response.json()) == (404, {"code": "not_found", "error": "comment not found"})
        assert set(Comment.objects.values_list("message", flat=True)) == {"gone", "m"}

    def test_non_member_404_and_anonymous_401(self, client_for, anonymous, outsider, comment):
        assert client_for(outsider).post(edit_url(comment), {"message": "x"}).status_code == 404
        assert anonymous.post(edit_url(comment), {"message": "x"}).status_code == 401
        assert Comment.objects.get().message == "First thought"


class TestDelete:
    def test_author_soft_deletes_and_the_board_counts_one_less(self, client_for, editor, ticket, comment,
                                                               board_listener, django_capture_on_commit_callbacks):
        Comment.objects.create(ticket=ticket, author=editor, message="Stays")
        api = client_for(editor)
        with django_capture_on_commit_callbacks(execute=True):
            response = api.post(delete_url(comment))

        assert (response.status_code, response.json()) == (200, {"ok": True})
        comment.refresh_from_db()
        assert comment.deleted_at is not None  # the row stays
        assert [c["message"] for c in detail_comments(api, ticket)] == ["Stays"]
        activity = Activity.objects.get(ticket=ticket)
        assert (activity.action, activity.actor, activity.changes) == ("comment_deleted", editor, {
            "comment": {"old": {"id": comment.id, "message": "First thought"}, "new": None}})
        [frame] = board_listener.card_frames()
        assert (frame["event"], frame["ticket"]["reaction_count"]) == ("ticket.updated", 1)
        assert api.post(delete_url(comment)).status_code == 404

    @pytest.mark.parametrize(("role", "expected"), [
        (Role.VIEWER, 403), (Role.CONTRIBUTOR, 403), (Role.EDITOR, 403), (Role.DEVELOPER, 403), (Role.MANAGER, 200)])
    def test_someone_elses_comment_needs_a_manager(self, client_for, member_with, comment, role, expected):
        response = client_for(member_with(role)).post(delete_url(comment))
        assert response.status_code == expected
        assert (Comment.objects.get().deleted_at is not None) == (expected == 200)

    def test_a_viewer_deletes_their_own(self, client_for, viewer, ticket):
        own = Comment.objects.create(ticket=ticket, author=viewer, message="mine")
        assert client_for(viewer).post(delete_url(own)).status_code == 200

    def test_on_an_archived_ticket_is_422(self, client_for, editor, ticket, comment):
        ticket.archived_at = timezone.now()
        ticket.save()
        assert client_for(editor).post(delete_url(comment)).status_code == 422
        assert (Comment.objects.get().deleted_at, Activity.objects.exists()) == (None, False)

    def test_missing_404_non_member_404_and_anonymous_401(self, client_for, anonymous, outsider, editor, comment):
        assert client_for(editor).post("/api/v1/reactions/999999/delete").status_code == 404
        assert client_for(outsider).post(delete_url(comment)).status_code == 404
        assert anonymous.post(delete_url(comment)).status_code == 401
        assert Comment.objects.get().deleted_at is None
