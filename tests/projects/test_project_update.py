"""POST /api/v1/projects/{id}/update: a manager changes the project's settings, sending only what changes."""

import pytest

from projects.models import Project
from projects.roles import Role
from tests.factories import TicketFactory

ROLE_LADDER = [(Role.VIEWER, 403), (Role.CONTRIBUTOR, 403), (Role.EDITOR, 403), (Role.DEVELOPER, 403),
               (Role.MANAGER, 200)]


def url(project) -> str:
    return f"/api/v1/projects/{project.id}/update"


def settings_of(project) -> tuple:
    project.refresh_from_db()
    return project.name, project.prefix, project.description, project.docs_enabled, project.estimation_mode


def test_a_manager_changes_every_setting_and_gets_the_project_back(client_for, project, manager):
    response = client_for(manager).post(url(project), {
        "name": "Apollo 11", "prefix": "ap11", "description": "To the Moon", "docs_enabled": False,
        "estimation_mode": "hours"})

    assert (response.status_code, response.json()) == (200, {"project": {
        "id": project.id, "name": "Apollo 11", "prefix": "AP11", "description": "To the Moon", "role": "manager",
        "docs_enabled": False, "estimation_mode": "hours"}})
    assert settings_of(project) == ("Apollo 11", "AP11", "To the Moon", False, "hours")


def test_what_is_not_sent_stays_and_the_tickets_references_follow_the_prefix(client_for, project, manager):
    TicketFactory(project=project)
    api = client_for(manager)
    assert api.post(url(project), {"prefix": "moon"}).status_code == 200
    assert settings_of(project) == ("Apollo", "MOON", "", True, "story_points")
    assert api.get(f"/api/v1/projects/{project.id}/tickets").json()["tickets"][0]["prefix_ref"] == "MOON-1"
    assert api.post(url(project), {}).status_code == 200  # nothing to change
    assert settings_of(project) == ("Apollo", "MOON", "", True, "story_points")


@pytest.mark.parametrize(("role", "expected"), ROLE_LADDER)
def test_only_managers_change_settings(client_for, project, member_with, role, expected):
    response = client_for(member_with(role)).post(url(project), {"name": "Renamed"})
    assert response.status_code == expected
    assert settings_of(project)[0] == ("Renamed" if expected == 200 else "Apollo")
    if expected == 403:
        assert response.json()["error"] == "your role in this project does not allow this"


def test_a_non_member_gets_404_and_no_token_401(client_for, anonymous, project, outsider):
    for response in (client_for(outsider).post(url(project), {"name": "Mine"}),
                     client_for(outsider).post("/api/v1/projects/999999/update", {"name": "Mine"})):
        assert (response.status_code, response.json()["error"]) == (404, "project not found")
    assert anonymous.post(url(project), {"name": "Mine"}).status_code == 401
    assert settings_of(project)[0] == "Apollo"


@pytest.mark.parametrize(("body", "error"), [
    ({"name": "A"}, "name: Ensure this field has at least 2 characters."),
    ({"name": "   "}, "name cannot be empty"),
    ({"name": None}, "name cannot be empty"),
    ({"prefix": "AB-1"}, "prefix: must be 1 to 10 letters or digits"),
    ({"prefix": ""}, "prefix cannot be empty"),
    ({"description": "x" * 2001}, "description: Ensure this field has no more than 2000 characters."),
    ({"docs_enabled": "no"}, "docs_enabled: must be true or false"),
    ({"estimation_mode": "t-shirts"}, 'estimation_mode: "t-shirts" is not a valid choice.'),
    ({"name": "Fine", "estimation_mode": "t-shirts"}, 'estimation_mode: "t-shirts" is not a valid choice.'),
])
def test_a_bad_value_is_422_naming_it_and_changes_nothing(client_for, project, manager, body, error):
    response = client_for(manager).post(url(project), body)
    assert (response.status_code, response.json()["error"]) == (422, error)
    assert settings_of(project) == ("Apollo", "APL", "", True, "story_points")


def test_the_answer_is_the_one_project_read_afterwards(client_for, project, manager):
    api = client_for(manager)
    answer = api.post(url(project), {"docs_enabled": False}).json()
    assert answer == api.get(f"/api/v1/projects/{project.id}").json()
    assert Project.objects.get(pk=project.pk).docs_enabled is False
