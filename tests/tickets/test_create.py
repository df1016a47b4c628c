import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from events.models import ProjectEvent
from projects.roles import Role
from tests.factories import ProjectFactory, TagFactory, TicketFactory
from tickets.models import Activity, Ticket
from tickets.services.positions import GAP

from .conftest import status_of


def create_url(project):
    return f"/api/v1/projects/{project.id}/tickets"


def test_minimal_ticket_gets_defaults_and_next_number(client_for, project, editor):
    TicketFactory(project=project)  # number 1
    response = client_for(editor).post(create_url(project), {"title": "Crash on save"})

    assert (response.status_code, response.json()) == (201, {"ticket_ref": "APL-2"})
    ticket = Ticket.objects.get(project=project, number=2)
    assert (ticket.title, ticket.description, ticket.type, ticket.priority, ticket.status.slug) == (
        "Crash on save", "", "feature", None, "backlog")
    assert (ticket.deadline, ticket.story_points, ticket.estimated_hours, ticket.created_by) == (
        None, None, None, editor)
    assert list(ticket.tags.all()) == [] and ticket.checklist_items.count() == 0


def test_every_optional_field(client_for, project, editor):
    tags = [TagFactory(project=project), TagFactory(project=project)]
    response = client_for(editor).post(create_url(project), {
        "title": "Release 2.0", "description": "All of it", "type": "release", "priority": "urgent",
        "status": "review", "deadline": "2027-01-31", "story_points": 3,
        "checklist": ["Changelog", "Tag the build"], "tags": [tag.id for tag in tags],
    })

    assert response.status_code == 201
    ticket = Ticket.objects.get(project=project)
    assert (ticket.type, ticket.priority, ticket.status.slug, str(ticket.deadline), ticket.story_points,
            ticket.description) == ("release", "urgent", "review", "2027-01-31", 3, "All of it")
    assert set(ticket.tags.all()) == set(tags)
    assert list(ticket.checklist_items.values_list("text", "done", "sort_order")) == [
        ("Changelog", False, 0), ("Tag the build", False, 1)]


def test_estimated_hours_in_an_hours_project(client_for, outsider):
    project = ProjectFactory(owner=outsider, estimation_mode="hours", prefix="HRS")
    response = client_for(outsider).post(create_url(project), {"title": "Estimate me", "estimated_hours": 2.5})
    assert response.status_code == 201
    assert float(Ticket.objects.get(project=project).estimated_hours) == 2.5


def test_a_new_ticket_goes_to_the_end_of_its_column(client_for, project, editor):
    TicketFactory(project=project, status=status_of(project, "todo"), sort_order=7)
    client_for(editor).post(create_url(project), {"title": "Last", "status": "todo"})
    assert Ticket.objects.get(title="Last").sort_order == 7 + GAP


def test_archived_and_deleted_tickets_do_not_hold_a_place_in_the_column(client_for, project, editor):
    todo = status_of(project, "todo")
    TicketFactory(project=project, status=todo, sort_order=3)
    TicketFactory(project=project, status=todo, sort_order=40, archived_at=timezone.now())
    TicketFactory(project=project, status=todo, sort_order=50, deleted_at=timezone.now())
    TicketFactory(project=project, status=status_of(project, "review"), sort_order=60)
    client_for(editor).post(create_url(project), {"title": "Next", "status": "todo"})
    assert Ticket.objects.get(title="Next").sort_order == 3 + GAP


def test_the_first_ticket_of_a_column_is_at_position_zero(client_for, project, editor):
    client_for(editor).post(create_url(project), {"title": "First", "status": "todo"})
    assert Ticket.objects.get(title="First").sort_order == 0


def test_a_creation_locks_the_project_row_once_for_its_number_and_its_frame(client_for, project, editor):
    """Creations in one project queue on its row: one statement takes the number and the frame's seq."""
    client = client_for(editor)
    with CaptureQueriesContext(connection) as queries:
        response = client.post(create_url(project), {"title": "Counted"})
    assert response.status_code == 201
    touching_project = [query["sql"] for query in queries.captured_queries if "projects_project" in query["sql"]
                        and ("UPDATE" in query["sql"] or "FOR " in query["sql"])]
    assert len(touching_project) == 1
    project.refresh_from_db()
    event = ProjectEvent.objects.get(project=project)
    assert (project.last_ticket_number, project.board_seq, event.seq, event.payload["ticket"]["prefix_ref"]) == (
        1, 1, 1, "APL-1")


def test_a_ticket_created_in_done_counts_for_velocity(client_for, project, editor):
    client_for(editor).post(create_url(project), {"title": "Done already", "status": "done"})
    assert Ticket.objects.get(title="Done already").done_at is not None


def test_records_history_and_broadcasts(client_for, project, editor, board_listener,
                                        django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        client_for(editor).post(create_url(project), {"title": "Watch me", "checklist": ["one"]})
    ticket = Ticket.objects.get(title="Watch me")
    activity = Activity.objects.get(ticket=ticket)
    assert (activity.action, activity.actor) == ("created", editor)
    assert activity.changes["title"] == {"old": None, "new": "Watch me"}
    assert activity.changes["checklist"] == {"old": [], "new": ["one"]}
    [frame] = board_listener.frames()
    assert (frame["event"], frame["ticket"]["id"], frame["ticket"]["checklist_total"], frame["actor"]) == (
        "ticket.created", ticket.id, 1, {"id": editor.id, "name": editor.name})


@pytest.mark.parametrize(("role", "expected"), [
    (Role.VIEWER, 403), (Role.CONTRIBUTOR, 403), (Role.EDITOR, 201), (Role.DEVELOPER, 201), (Role.MANAGER, 201)])
def test_role_ladder(client_for, project, member_with, role, expected):
    response = client_for(member_with(role)).post(create_url(project), {"title": "By role"})
    assert response.status_code == expected
    assert Ticket.objects.filter(title="By role").exists() == (expected == 201)


def test_non_member_404_and_anonymous_401(client_for, anonymous, project, outsider):
    assert client_for(outsider).post(create_url(project), {"title": "x"}).status_code == 404
    assert anonymous.post(create_url(project), {"title": "x"}).status_code == 401
    assert not Ticket.objects.exists()


@pytest.mark.parametrize(("body", "error"), [
    ({}, "title is required"),
    ({"title": ""}, "title cannot be empty"),
    ({"title": "   "}, "title cannot be empty"),
    ({"title": "x" * 256}, "title: Ensure this field has no more than 255 characters."),
    ({"title": "t", "type": "epic"}, 'type: "epic" is not a valid choice.'),
    ({"title": "t", "priority": "critical"}, 'priority: "critical" is not a valid choice.'),
    ({"title": "t", "status": "nowhere"}, "status: unknown status nowhere"),
    ({"title": "t", "deadline": "31/01/2027"}, "deadline: Date has wrong format. Use one of these formats instead: YYYY-MM-DD."),
    ({"title": "t", "deadline": "2027-02-30"}, "deadline: Date has wrong format. Use one of these formats instead: YYYY-MM-DD."),
    ({"title": "t", "story_points": 4}, "story_points: Ensure this value is less than or equal to 3."),
    ({"title": "t", "story_points": -1}, "story_points: Ensure this value is greater than or equal to 0."),
    ({"title": "t", "estimated_hours": 3}, "estimated_hours: this project does not use hours estimation"),
    ({"title": "t", "checklist": ["x" * 501]}, "checklist[0]: Ensure this field has no more than 500 characters."),
    ({"title": "t", "checklist": "not a list"}, 'checklist: Expected a list of items but got type "str".'),
    ({"title": "t", "tags": [999999]}, "tags: unknown tag ids for this project: [999999]"),
    ({"title": "t", "tags": ["a"]}, "tags[0]: A valid integer is required."),
])
def test_invalid_body_is_422_and_creates_nothing(client_for, project, editor, body, error):
    response = client_for(editor).post(create_url(project), body)
    assert (response.status_code, response.json()["error"]) == (422, error)
    assert not Ticket.objects.exists()
    assert project.__class__.objects.get(pk=project.pk).last_ticket_number == 0


def test_story_points_refused_where_the_project_does_not_use_them(client_for, outsider):
    project = ProjectFactory(owner=outsider, estimation_mode="none")
    response = client_for(outsider).post(create_url(project), {"title": "t", "story_points": 1})
    assert response.json() == {
        "code": "validation_failed", "error": "story_points: this project does not use story points estimation",
                               "field": "story_points"}


def test_tag_of_another_project_is_422(client_for, project, editor):
    foreign = TagFactory()
    response = client_for(editor).post(create_url(project), {"title": "t", "tags": [foreign.id]})
    assert (response.status_code, response.json()["error"]) == (
        422, f"tags: unknown tag ids for this project: [{foreign.id}]")


def test_numbers_are_per_project_and_never_reused(client_for, project, manager):
    api = client_for(manager)
    other = ProjectFactory(owner=manager, prefix="OTH")
    assert api.post(create_url(project), {"title": "a"}).json() == {"ticket_ref": "APL-1"}
    assert api.post(create_url(other), {"title": "b"}).json() == {"ticket_ref": "OTH-1"}
    assert api.post(create_url(project), {"title": "c"}).json() == {"ticket_ref": "APL-2"}
    assert api.post(f"/api/v1/projects/{project.id}/tickets/2/delete").status_code == 200
    assert api.post(create_url(project), {"title": "d"}).json() == {"ticket_ref": "APL-3"}
