import pytest
from django.utils import timezone

from accounts.models import ApiToken
from projects.models import Membership, Project, Status
from projects.roles import Role
from tests.conftest import ROLES
from tests.factories import MembershipFactory, ProjectFactory

URL = "/api/v1/projects"


class TestList:
    def test_lists_own_projects_alphabetically_with_role(self, client_for, manager, project):
        zeta = ProjectFactory(name="zeta", prefix="Z", description="last")
        beta = ProjectFactory(name="Beta", prefix="B", docs_enabled=False)
        MembershipFactory(project=zeta, user=manager, role=Role.VIEWER)
        MembershipFactory(project=beta, user=manager, role=Role.DEVELOPER)
        ProjectFactory(name="Alpha, not mine")

        response = client_for(manager).get(URL)

        assert response.status_code == 200
        assert response.json() == {"projects": [
            {"id": project.id, "name": "Apollo", "prefix": "APL", "description": "", "role": "manager",
             "docs_enabled": True, "estimation_mode": "story_points"},
            {"id": beta.id, "name": "Beta", "prefix": "B", "description": "", "role": "developer",
             "docs_enabled": False, "estimation_mode": "story_points"},
            {"id": zeta.id, "name": "zeta", "prefix": "Z", "description": "last", "role": "viewer",
             "docs_enabled": True, "estimation_mode": "story_points"},
        ]}

    def test_empty_for_a_user_without_projects(self, client_for, outsider):
        response = client_for(outsider).get(URL)
        assert (response.status_code, response.json()) == (200, {"projects": []})

    def test_query_count_does_not_grow(self, client_for, manager, django_assert_max_num_queries):
        api = client_for(manager)
        for _ in range(3):
            MembershipFactory(user=manager)
        with django_assert_max_num_queries(3):  # token, its last use, the list
            assert len(api.get(URL).json()["projects"]) == 4
        for _ in range(30):
            MembershipFactory(user=manager)
        with django_assert_max_num_queries(3):  # token, its last use, the list
            assert len(api.get(URL).json()["projects"]) == 34

    def test_needs_a_token(self, anonymous, db):
        assert anonymous.get(URL).status_code == 401


class TestDetail:
    @pytest.mark.parametrize("role", ROLES)
    def test_any_member_gets_it_as_the_list_shows_it(self, client_for, member_with, project, role):
        Project.objects.filter(pk=project.pk).update(description="Moon", docs_enabled=False, estimation_mode="hours")
        api = client_for(member_with(role))
        response = api.get(f"{URL}/{project.id}")

        assert (response.status_code, response.json()) == (200, {"project": {
            "id": project.id, "name": "Apollo", "prefix": "APL", "description": "Moon", "role": role.value,
            "docs_enabled": False, "estimation_mode": "hours"}})
        assert response.json()["project"] in api.get(URL).json()["projects"]

    def test_a_non_member_or_a_missing_project_is_not_found(self, client_for, outsider, project):
        for url in [f"{URL}/{project.id}", f"{URL}/{project.id + 1000}"]:
            response = client_for(outsider).get(url)
            assert (response.status_code, response.json()) == (404, {"code": "not_found", "error": "project not found"})

    def test_needs_a_token(self, anonymous, project):
        assert anonymous.get(f"{URL}/{project.id}").status_code == 401

    def test_reads_the_token_and_the_membership_only(self, client_for, manager, project,
                                                     django_assert_max_num_queries):
        api = client_for(manager)
        with django_assert_max_num_queries(3):  # token, its last use, the membership with its project
            assert api.get(f"{URL}/{project.id}").status_code == 200


class TestCreate:
    def test_creates_project_with_owner_as_manager_and_default_statuses(self, client_for, outsider):
        response = client_for(outsider).post(URL, {"name": "Mobile app", "prefix": "mob1", "description": "iOS"})

        assert response.status_code == 201
        project = Project.objects.get(name="Mobile app")
        assert response.json() == {"project": {"id": project.id, "name": "Mobile app", "prefix": "MOB1",
                                               "description": "iOS"}}
        assert project.owner == outsider
        assert Membership.objects.get(project=project).role == Role.MANAGER
        assert list(Status.objects.filter(project=project).values_list("slug", "category")) == [
            ("backlog", "backlog"), ("todo", "todo"), ("in_progress", "active"), ("review", "review"),
            ("done", "done"),
        ]
        assert (project.estimation_mode, project.docs_enabled) == ("story_points", True)

    def test_prefix_is_derived_from_the_name_when_omitted(self, client_for, outsider):
        response = client_for(outsider).post(URL, {"name": "Customer portal"})
        assert response.status_code == 201
        assert response.json()["project"]["prefix"] == "CP"
        assert response.json()["project"]["description"] == ""

    def test_the_creator_sees_it_in_the_list(self, client_for, outsider):
        api = client_for(outsider)
        api.post(URL, {"name": "Mine"})
        assert [p["role"] for p in api.get(URL).json()["projects"]] == ["manager"]

    @pytest.mark.parametrize(("body", "error"), [
        ({}, "name is required"),
        ({"name": "A"}, "name: Ensure this field has at least 2 characters."),
        ({"name": "  "}, "name cannot be empty"),
        ({"name": "x" * 201}, "name: Ensure this field has no more than 200 characters."),
        ({"name": None}, "name cannot be empty"),
        ({"name": "Valid", "prefix": "AB-1"}, "prefix: must be 1 to 10 letters or digits"),
        ({"name": "Valid", "prefix": "ABCDEFGHIJK"}, "prefix: must be 1 to 10 letters or digits"),
        ({"name": ["Va", "lid"]}, "name: Not a valid string."),
    ])
    def test_invalid_body_is_422_and_creates_nothing(self, client_for, outsider, body, error):
        response = client_for(outsider).post(URL, body)
        assert response.status_code == 422
        assert response.json() == {
            "code": "validation_failed", "error": error, "field": error.split(" ")[0].rstrip(":")}
        assert not Project.objects.exists()

    def test_needs_a_token(self, anonymous, db):
        assert anonymous.post(URL, {"name": "Nope"}).status_code == 401
        assert not Project.objects.exists()


class TestStatuses:
    def test_lists_the_columns_in_order(self, client_for, project, viewer):
        response = client_for(viewer).get(f"/api/v1/projects/{project.id}/statuses")
        assert response.status_code == 200
        statuses = response.json()["statuses"]
        assert [s["slug"] for s in statuses] == ["backlog", "todo", "in_progress", "review", "done"]
        assert statuses[2] == {"slug": "in_progress", "label": "In progress", "color": "#fd7e14",
                               "icon": "bi-play-circle", "category": "active", "hidden": False}

    @pytest.mark.parametrize("role", ROLES)
    def test_every_member_may_read(self, client_for, project, member_with, role):
        assert client_for(member_with(role)).get(f"/api/v1/projects/{project.id}/statuses").status_code == 200

    def test_non_member_and_missing_project_are_404(self, client_for, project, outsider):
        api = client_for(outsider)
        for url in (f"/api/v1/projects/{project.id}/statuses", "/api/v1/projects/999999/statuses"):
            assert (api.get(url).status_code, api.get(url).json()) == (404, {
                "code": "not_found", "error": "project not found"})

    def test_needs_a_token(self, anonymous, project):
        assert anonymous.get(f"/api/v1/projects/{project.id}/statuses").status_code == 401


class TestMembers:
    def test_lists_members_by_name(self, client_for, project, manager, member_with):
        zed = member_with(Role.DEVELOPER)
        zed.name, zed.avatar_url = "Zed", "https://example.com/z.png"
        zed.save()
        amy = member_with(Role.VIEWER)
        amy.name = "amy"
        amy.save()
        manager.name = "Manny"
        manager.save()

        response = client_for(amy).get(f"/api/v1/projects/{project.id}/members")

        assert response.status_code == 200
        assert response.json() == {"members": [
            {"id": amy.id, "name": "amy", "avatar": None, "role": "viewer"},
            {"id": manager.id, "name": "Manny", "avatar": None, "role": "manager"},
            {"id": zed.id, "name": "Zed", "avatar": "https://example.com/z.png", "role": "developer"},
        ]}

    def test_a_user_without_a_name_is_listed_by_username(self, client_for, project, manager):
        manager.name = ""
        manager.save()
        response = client_for(manager).get(f"/api/v1/projects/{project.id}/members")
        assert response.json()["members"][0]["name"] == manager.username

    def test_query_count_does_not_grow(self, client_for, project, manager, member_with,
                                       django_assert_max_num_queries):
        api = client_for(manager)
        for _ in range(20):
            member_with(Role.EDITOR)
        with django_assert_max_num_queries(4):  # token, its last use, membership, the list
            assert len(api.get(f"/api/v1/projects/{project.id}/members").json()["members"]) == 21

    def test_non_member_is_404(self, client_for, project, outsider):
        assert client_for(outsider).get(f"/api/v1/projects/{project.id}/members").status_code == 404

    def test_a_revoked_token_is_401_even_with_a_membership(self, client_for, project, manager):
        api = client_for(manager)
        ApiToken.objects.filter(user=manager).update(revoked_at=timezone.now())
        response = api.get(f"/api/v1/projects/{project.id}/members")
        assert (response.status_code, response.json()) == (401, {
            "code": "unauthenticated", "error": "invalid, expired or revoked token"})
