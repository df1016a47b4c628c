from django.utils import timezone

from projects.roles import Role
from tests.factories import StatusFactory, TicketFactory


def status(project, slug):
    return project.statuses.get(slug=slug)


def test_counts_tickets_outside_done_columns(client_for, project, viewer):
    for slug in ("backlog", "todo", "in_progress", "review"):
        TicketFactory(project=project, status=status(project, slug))
    TicketFactory(project=project, status=status(project, "done"))
    TicketFactory(project=project, status=StatusFactory(project=project, category="done", slug="shipped"))
    TicketFactory(project=project, archived_at=timezone.now())
    TicketFactory(project=project, deleted_at=timezone.now())
    TicketFactory()  # another project

    response = client_for(viewer).get(f"/api/v1/projects/{project.id}/stats")

    assert (response.status_code, response.json()) == (200, {"open_tickets": 4})


def test_zero_for_an_empty_project(client_for, manager, project):
    assert client_for(manager).get(f"/api/v1/projects/{project.id}/stats").json() == {"open_tickets": 0}


def test_every_role_may_read(client_for, project, member_with):
    for role in Role:
        assert client_for(member_with(role)).get(f"/api/v1/projects/{project.id}/stats").status_code == 200


def test_non_member_missing_project_and_anonymous(client_for, anonymous, project, outsider):
    assert client_for(outsider).get(f"/api/v1/projects/{project.id}/stats").status_code == 404
    assert client_for(outsider).get("/api/v1/projects/424242/stats").status_code == 404
    assert anonymous.get(f"/api/v1/projects/{project.id}/stats").status_code == 401
