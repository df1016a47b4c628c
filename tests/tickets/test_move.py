import pytest
from django.utils import timezone

from core import live
from projects.roles import Role
from tests.factories import TicketFactory
from tickets import services
from tickets.models import Activity, Ticket
from tickets.services.positions import GAP

from .conftest import status_of, ticket_url


def move(client, ticket, body):
    return client.post(ticket_url(ticket, "move"), body)


def test_move_sends_ticket_to_end_of_column(client_for, editor, ticket, project, board_listener,
                                            django_capture_on_commit_callbacks):
    TicketFactory(project=project, status=status_of(project, "done"), sort_order=5)
    with django_capture_on_commit_callbacks(execute=True):
        response = move(client_for(editor), ticket, {"status": "done"})
    assert (response.status_code, response.json()) == (200, {"ok": True})
    ticket.refresh_from_db()
    assert (ticket.status.slug, ticket.sort_order, ticket.done_at is not None) == ("done", 5 + GAP, True)
    [frame] = board_listener.frames()
    assert {key: frame[key] for key in ("event", "project_id", "from_status", "to_status", "actor")} == {
        "event": "ticket.moved", "project_id": project.id, "from_status": "backlog", "to_status": "done",
        "actor": {"id": editor.id, "name": editor.name}}
    assert (frame["ticket"]["id"], frame["ticket"]["status"], frame["seq"]) == (ticket.id, "done", 1)


def test_frames_carry_a_growing_sequence(client_for, editor, ticket, board_listener,
                                         django_capture_on_commit_callbacks):
    api = client_for(editor)
    with django_capture_on_commit_callbacks(execute=True):
        for slug in ("todo", "review", "done"):
            move(api, ticket, {"status": slug})
    assert [frame["seq"] for frame in board_listener.frames()] == [1, 2, 3]


def test_history_entry(client_for, editor, ticket):
    move(client_for(editor), ticket, {"status": "in_progress"})
    activity = Activity.objects.get(ticket=ticket)
    assert (activity.action, activity.actor, activity.changes["status"]) == (
        "moved", editor, {"old": "backlog", "new": "in_progress"})


def test_moving_to_the_same_status_changes_nothing(client_for, editor, ticket, board_listener,
                                                   django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        assert move(client_for(editor), ticket, {"status": "backlog"}).status_code == 200
    assert not Activity.objects.exists() and board_listener.frames() == []


@pytest.mark.parametrize(("body", "error"), [
    ({}, "status is required"),
    ({"status": ""}, "status cannot be empty"),
    ({"status": "shipped"}, "status: unknown status shipped"),
    ({"status": 3}, "status: unknown status 3"),
])
def test_invalid_status_is_422(client_for, editor, ticket, board_listener, body, error,
                               django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = move(client_for(editor), ticket, body)
    assert (response.status_code, response.json()["error"]) == (422, error)
    assert Ticket.objects.get(pk=ticket.pk).status.slug == "backlog"
    assert board_listener.frames() == []


def test_status_of_another_project_is_422(client_for, editor, ticket):
    other = TicketFactory()
    other.project.statuses.filter(slug="review").update(slug="elsewhere")
    assert move(client_for(editor), ticket, {"status": "elsewhere"}).status_code == 422


def test_archived_ticket_cannot_move(client_for, editor, project):
    ticket = TicketFactory(project=project, archived_at=timezone.now())
    assert move(client_for(editor), ticket, {"status": "done"}).status_code == 422
    assert Ticket.objects.get(pk=ticket.pk).status.slug == "backlog"


@pytest.mark.parametrize(("role", "expected"), [
    (Role.VIEWER, 403), (Role.CONTRIBUTOR, 403), (Role.EDITOR, 200), (Role.DEVELOPER, 200), (Role.MANAGER, 200)])
def test_role_ladder(client_for, member_with, ticket, role, expected):
    assert move(client_for(member_with(role)), ticket, {"status": "todo"}).status_code == expected
    assert (Ticket.objects.get(pk=ticket.pk).status.slug == "todo") == (expected == 200)


def test_non_member_404_and_anonymous_401(client_for, anonymous, outsider, ticket):
    assert move(client_for(outsider), ticket, {"status": "todo"}).status_code == 404
    assert anonymous.post(ticket_url(ticket, "move"), {"status": "todo"}).status_code == 401


def test_a_rolled_back_write_sends_nothing(editor, ticket, project, board_listener, monkeypatch,
                                           django_capture_on_commit_callbacks):
    def fail(**kwargs):
        raise RuntimeError("the history table is gone")

    monkeypatch.setattr(services.history, "record", fail)
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(RuntimeError):
        services.move_ticket(ticket=ticket, status=status_of(project, "done"), actor=editor)
    assert Ticket.objects.get(pk=ticket.pk).status.slug == "backlog"
    assert board_listener.frames() == []


def test_a_broadcast_failure_does_not_fail_the_move(client_for, editor, ticket, monkeypatch,
                                                    django_capture_on_commit_callbacks):
    def unreachable(*args, **kwargs):
        raise ConnectionError("redis is down")

    monkeypatch.setattr(live, "send", unreachable)
    with django_capture_on_commit_callbacks(execute=True):
        response = move(client_for(editor), ticket, {"status": "todo"})
    assert response.status_code == 200
    assert Ticket.objects.get(pk=ticket.pk).status.slug == "todo"
