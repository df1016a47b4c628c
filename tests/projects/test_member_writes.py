"""A project's members managed by its managers: a role changed, a member removed (their boards of the project
close at once); the project's owner stays a manager."""

import pytest

from accounts.consumers import CLOSE
from projects.models import Membership
from projects.roles import Role

ROLE_LADDER = [(Role.VIEWER, 403), (Role.CONTRIBUTOR, 403), (Role.EDITOR, 403), (Role.DEVELOPER, 403),
               (Role.MANAGER, None)]


def member_url(project, user, action: str) -> str:
    return f"/api/v1/projects/{project.id}/members/{user.id}/{action}"


def roles(project) -> dict[int, str]:
    return dict(Membership.objects.filter(project=project).values_list("user_id", "role"))


class TestRole:
    @pytest.mark.parametrize("role", ["viewer", "contributor", "editor", "developer", "manager"])
    def test_a_manager_gives_a_member_a_role(self, client_for, project, manager, editor, role, removal_of,
                                             django_capture_on_commit_callbacks):
        sockets = removal_of(editor)
        with django_capture_on_commit_callbacks(execute=True):
            response = client_for(manager).post(member_url(project, editor, "update"), {"role": role})
        assert (response.status_code, response.json()) == (200, {"member": {
            "id": editor.id, "name": editor.display_name, "avatar": None, "role": role}})
        assert roles(project)[editor.id] == role
        assert sockets.messages() == []  # a role change is not a removal

    def test_the_owner_stays_a_manager(self, client_for, project, manager, member_with):
        other_manager = member_with(Role.MANAGER)
        response = client_for(other_manager).post(member_url(project, manager, "update"), {"role": "viewer"})
        assert (response.status_code, response.json()["error"]) == (422, "role: the project's owner stays its manager")
        assert roles(project)[manager.id] == "manager"
        assert client_for(other_manager).post(member_url(project, manager, "update"),
                                              {"role": "manager"}).status_code == 200

    @pytest.mark.parametrize(("body", "error"), [({}, "role is required"),
                                                 ({"role": "owner"}, 'role: "owner" is not a valid choice.')])
    def test_a_bad_role_is_422(self, client_for, project, manager, editor, body, error):
        response = client_for(manager).post(member_url(project, editor, "update"), body)
        assert (response.status_code, response.json()["error"]) == (422, error)
        assert roles(project)[editor.id] == "editor"

    @pytest.mark.parametrize(("role", "expected"), ROLE_LADDER)
    def test_only_managers_change_roles(self, client_for, project, member_with, editor, role, expected):
        response = client_for(member_with(role)).post(member_url(project, editor, "update"), {"role": "viewer"})
        assert response.status_code == (expected or 200)
        assert roles(project)[editor.id] == ("editor" if expected else "viewer")

    def test_someone_not_a_member_is_404_and_so_is_a_non_members_call(self, client_for, project, manager, editor,
                                                                      outsider):
        response = client_for(manager).post(member_url(project, outsider, "update"), {"role": "viewer"})
        assert (response.status_code, response.json()["error"]) == (404, "member not found")
        response = client_for(outsider).post(member_url(project, editor, "update"), {"role": "viewer"})
        assert (response.status_code, response.json()["error"]) == (404, "project not found")
        assert outsider.id not in roles(project) and roles(project)[editor.id] == "editor"

    def test_needs_a_token(self, anonymous, project, editor):
        assert anonymous.post(member_url(project, editor, "update"), {"role": "viewer"}).status_code == 401


class TestRemove:
    def test_a_manager_removes_a_member_whose_boards_close(self, client_for, project, manager, editor, viewer,
                                                           removal_of, django_capture_on_commit_callbacks):
        removed, kept = removal_of(editor), removal_of(viewer)
        with django_capture_on_commit_callbacks(execute=True):
            response = client_for(manager).post(member_url(project, editor, "delete"))
        assert (response.status_code, response.json()) == (200, {"ok": True})
        assert roles(project) == {manager.id: "manager", viewer.id: "viewer"}
        assert (removed.messages(), kept.messages()) == ([CLOSE], [])
        assert client_for(editor).get(f"/api/v1/projects/{project.id}").status_code == 404

    def test_a_manager_may_leave_but_the_owner_stays(self, client_for, project, manager, member_with):
        other_manager = member_with(Role.MANAGER)
        response = client_for(other_manager).post(member_url(project, manager, "delete"))
        assert (response.status_code, response.json()["error"]) == (422, "role: the project's owner stays its manager")
        assert client_for(other_manager).post(member_url(project, other_manager, "delete")).status_code == 200
        assert roles(project) == {manager.id: "manager"}

    @pytest.mark.parametrize(("role", "expected"), ROLE_LADDER)
    def test_only_managers_remove(self, client_for, project, member_with, editor, role, expected):
        response = client_for(member_with(role)).post(member_url(project, editor, "delete"))
        assert response.status_code == (expected or 200)
        assert (editor.id in roles(project)) == bool(expected)

    def test_someone_not_a_member_is_404(self, client_for, project, manager, outsider):
        response = client_for(manager).post(member_url(project, outsider, "delete"))
        assert (response.status_code, response.json()["error"]) == (404, "member not found")
