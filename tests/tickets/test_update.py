from datetime import date
from decimal import Decimal

import pytest
from django.utils import timezone

from projects.roles import Role
from tests.factories import ProjectFactory, TagFactory, TicketFactory
from tickets.models import Activity, Ticket

from .conftest import status_of, ticket_url


@pytest.fixture
def rich_ticket(project, manager):
    return TicketFactory(project=project, title="Old", description="Old text", type="bug", priority="high",
                         deadline=date(2027, 1, 1), story_points=2, tags=[TagFactory(project=project)])


def update(client, ticket, body):
    return client.post(ticket_url(ticket, "update"), body)


def test_only_sent_fields_change(client_for, editor, rich_ticket):
    response = update(client_for(editor), rich_ticket, {"title": "New title"})
    assert (response.status_code, response.json()) == (200, {"ok": True})
    ticket = Ticket.objects.get(pk=rich_ticket.pk)
    assert (ticket.title, ticket.description, ticket.type, ticket.priority, ticket.story_points) == (
        "New title", "Old text", "bug", "high", 2)
    assert ticket.tags.count() == 1


def test_null_and_empty_string_clear(client_for, editor, rich_ticket):
    update(client_for(editor), rich_ticket,
           {"description": "", "priority": None, "deadline": None, "story_points": None})
    ticket = Ticket.objects.get(pk=rich_ticket.pk)
    assert (ticket.description, ticket.priority, ticket.deadline, ticket.story_points) == ("", None, None, None)


def test_every_field_at_once(client_for, editor, project, rich_ticket):
    tags = [TagFactory(project=project), TagFactory(project=project)]
    update(client_for(editor), rich_ticket, {
        "title": "T", "description": "D", "type": "release", "priority": "low", "deadline": "2027-05-05",
        "story_points": 0, "tags": [tag.id for tag in tags]})
    ticket = Ticket.objects.get(pk=rich_ticket.pk)
    assert (ticket.title, ticket.description, ticket.type, ticket.priority, ticket.deadline,
            ticket.story_points) == ("T", "D", "release", "low", date(2027, 5, 5), 0)
    assert set(ticket.tags.all()) == set(tags)


def test_tags_replace_and_empty_list_clears(client_for, editor, rich_ticket):
    update(client_for(editor), rich_ticket, {"tags": []})
    assert Ticket.objects.get(pk=rich_ticket.pk).tags.count() == 0


def test_status_is_ignored(client_for, editor, rich_ticket):
    response = update(client_for(editor), rich_ticket, {"status": "done", "title": "Renamed"})
    assert response.status_code == 200
    ticket = Ticket.objects.get(pk=rich_ticket.pk)
    assert (ticket.status.slug, ticket.title) == ("backlog", "Renamed")


def test_estimated_hours_in_an_hours_project(client_for, outsider):
    project = ProjectFactory(owner=outsider, estimation_mode="hours")
    ticket = TicketFactory(project=project)
    update(client_for(outsider), ticket, {"estimated_hours": 4.25})
    assert Ticket.objects.get(pk=ticket.pk).estimated_hours == Decimal("4.25")
    update(client_for(outsider), ticket, {"estimated_hours": None})
    assert Ticket.objects.get(pk=ticket.pk).estimated_hours is None


def test_records_the_changed_fields_and_broadcasts(client_for, editor, rich_ticket, board_listener,
                                                   django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        update(client_for(editor), rich_ticket, {"title": "New", "priority": None, "deadline": "2027-01-01"})
    activity = Activity.objects.get(ticket=rich_ticket, action="updated")
    assert activity.actor == editor
    assert activity.changes == {"title": {"old": "Old", "new": "New"}, "priority": {"old": "high", "new": None}}
    [frame] = board_listener.frames()
    assert (frame["event"], frame["ticket"]["title"], frame["ticket"]["priority"]) == ("ticket.updated", "New", None)


def test_a_no_op_update_records_and_sends_nothing(client_for, editor, rich_ticket, board_listener,
                                                  django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = update(client_for(editor), rich_ticket, {"title": "Old"})
    assert response.status_code == 200
    assert not Activity.objects.filter(ticket=rich_ticket).exists()
    assert board_listener.frames() == []


@pytest.mark.parametrize(("body", "error"), [
    ({"title": ""}, "title cannot be empty"),
    ({"title": None}, "title cannot be empty"),
    ({"type": "epic"}, 'type: "epic" is not a valid choice.'),
    ({"type": None}, "type cannot be empty"),
    ({"priority": "meh"}, 'priority: "meh" is not a valid choice.'),
    ({"deadline": "tomorrow"}, "deadline: Date has wrong format. Use one of these formats instead: YYYY-MM-DD."),
    ({"story_points": 5}, "story_points: Ensure this value is less than or equal to 3."),
    ({"story_points": "two"}, "story_points: A valid integer is required."),
    ({"estimated_hours": 1}, "estimated_hours: this project does not use hours estimation"),
    ({"tags": [999999]}, "tags: unknown tag ids for this project: [999999]"),
    ({"tags": [0]}, "tags[0]: Ensure this value is greater than or equal to 1."),
    ({"description": "x" * 100_001}, "description: Ensure this field has no more than 100000 characters."),
])
def test_invalid_update_is_422_and_changes_nothing(client_for, editor, rich_ticket, body, error):
    response = update(client_for(editor), rich_ticket, body)
    assert (response.status_code, response.json()["error"]) == (422, error)
    ticket = Ticket.objects.get(pk=rich_ticket.pk)
    assert (ticket.title, ticket.type, ticket.priority, ticket.story_points, ticket.tags.count()) == (
        "Old", "bug", "high", 2, 1)


def test_archived_ticket_cannot_be_updated(client_for, editor, project):
    ticket = TicketFactory(project=project, archived_at=timezone.now(), title="Frozen")
    response = update(client_for(editor), ticket, {"title": "Thawed"})
    assert (response.status_code, response.json()) == (422, {
        "code": "validation_failed", "error": "ticket is archived: unarchive it first"})
    assert Ticket.objects.get(pk=ticket.pk).title == "Frozen"


@pytest.mark.parametrize(("role", "expected"), [
    (Role.VIEWER, 403), (Role.CONTRIBUTOR, 403), (Role.EDITOR, 200), (Role.DEVELOPER, 200), (Role.MANAGER, 200)])
def test_role_ladder(client_for, member_with, rich_ticket, role, expected):
    assert update(client_for(member_with(role)), rich_ticket, {"title": "By role"}).status_code == expected
    assert (Ticket.objects.get(pk=rich_ticket.pk).title == "By role") == (expected == 200)


def test_non_member_missing_deleted_and_anonymous(client_for, anonymous, outsider, editor, project, rich_ticket):
    assert update(client_for(outsider), rich_ticket, {"title": "x"}).status_code == 404
    assert anonymous.post(ticket_url(rich_ticket, "update"), {"title": "x"}).status_code == 401
    deleted = TicketFactory(project=project, deleted_at=timezone.now())
    assert update(client_for(editor), deleted, {"title": "x"}).status_code == 404
    assert client_for(editor).post(f"/api/v1/projects/{project.id}/tickets/999/update", {}).status_code == 404
    assert Ticket.objects.get(pk=rich_ticket.pk).title == "Old"


def test_a_tag_deleted_from_the_project_leaves_the_ticket_with_history(client_for, manager, project, rich_ticket):
    tag = rich_ticket.tags.get()
    client_for(manager).post(f"/api/v1/projects/{project.id}/tags/{tag.id}/delete")
    assert rich_ticket.tags.count() == 0
    activity = Activity.objects.get(ticket=rich_ticket)
    assert activity.changes == {"tags": {"old": [tag.id], "new": []}}
    assert status_of(project, "backlog") == Ticket.objects.get(pk=rich_ticket.pk).status
