"""A project's statuses (its board's columns) changed by its managers: added, changed, reordered, and deleted when
no ticket is in them; each change is an event of the project's log."""

import pytest
from django.utils import timezone

from projects.models import Status
from projects.roles import Role
from tests.factories import TicketFactory
from tests.tickets.conftest import BoardListener, status_of
from tickets.broadcast import board_group

DEFAULT = ["backlog", "todo", "in_progress", "review", "done"]
ROLE_LADDER = [(Role.VIEWER, 403), (Role.CONTRIBUTOR, 403), (Role.EDITOR, 403), (Role.DEVELOPER, 403),
               (Role.MANAGER, None)]


@pytest.fixture
def board_listener(project):
    listener = BoardListener(board_group(project.id))
    yield listener
    listener.close()


def statuses_url(project, tail: str = "") -> str:
    return f"/api/v1/projects/{project.id}/statuses{tail}"


def slugs(project) -> list[str]:
    return list(Status.objects.filter(project=project).order_by("sort_order", "id").values_list("slug", flat=True))


def rows(project) -> list[tuple]:
    return list(Status.objects.filter(project=project).order_by("sort_order", "id")
                .values_list("slug", "label", "color", "category", "hidden"))


class TestCreate:
    def test_a_manager_adds_a_column_at_the_end_with_a_slug_from_its_label(self, client_for, project, manager,
                                                                        board_listener,
                                                                        django_capture_on_commit_callbacks):
        api = client_for(manager)
        with django_capture_on_commit_callbacks(execute=True):
            response = api.post(statuses_url(project), {"label": "In Review 2", "color": "#ABCDEF",
                                                        "category": "review"})
        status = {"slug": "in_review_2", "label": "In Review 2", "color": "#abcdef", "icon": "", "category": "review",
                  "hidden": False}
        assert (response.status_code, response.json()) == (201, {"status": status})
        assert slugs(project) == [*DEFAULT, "in_review_2"]
        assert api.get(statuses_url(project)).json()["statuses"][-1] == status
        [frame] = board_listener.frames()
        assert (frame["event"], frame["status"]) == ("status.created", status)
        board = api.get(f"/api/v1/projects/{project.id}/board").json()
        assert board["columns"][-1] == {"status": "in_review_2", "hidden": False, "tickets": []}

    def test_defaults_and_a_taken_slug_gets_a_number(self, client_for, project, manager):
        api = client_for(manager)
        first = api.post(statuses_url(project), {"label": "Done"}).json()["status"]
        second = api.post(statuses_url(project), {"label": "done!", "hidden": True}).json()["status"]
        assert (first["slug"], first["color"], first["category"]) == ("done_2", "#6c757d", "todo")
        assert (second["slug"], second["hidden"]) == ("done_3", True)

    def test_a_slug_given_is_kept_and_one_the_project_has_is_422(self, client_for, project, manager):
        api = client_for(manager)
        assert api.post(statuses_url(project), {"label": "QA", "slug": "qa_1"}).json()["status"]["slug"] == "qa_1"
        response = api.post(statuses_url(project), {"label": "Other", "slug": "todo"})
        assert (response.status_code, response.json()["error"]) == (422, "slug: the project has a status with this slug")
        assert slugs(project) == [*DEFAULT, "qa_1"]

    @pytest.mark.parametrize(("body", "error"), [
        ({}, "label is required"),
        ({"label": " "}, "label cannot be empty"),
        ({"label": "x" * 101}, "label: Ensure this field has no more than 100 characters."),
        ({"label": "QA", "color": "blue"}, "color: must be a hex color like #1a2b3c"),
        ({"label": "QA", "category": "later"}, 'category: "later" is not a valid choice.'),
        ({"label": "QA", "slug": "Has Space"}, "slug: must be 1 to 50 lower-case letters, digits or _"),
        ({"label": "QA", "hidden": "yes"}, "hidden: must be true or false"),
    ])
    def test_a_bad_body_is_422_and_adds_nothing(self, client_for, project, manager, body, error):
        response = client_for(manager).post(statuses_url(project), body)
        assert (response.status_code, response.json()["error"]) == (422, error)
        assert slugs(project) == DEFAULT

    @pytest.mark.parametrize(("role", "expected"), ROLE_LADDER)
    def test_only_managers_add(self, client_for, project, member_with, role, expected):
        response = client_for(member_with(role)).post(statuses_url(project), {"label": "QA"})
        assert response.status_code == (expected or 201)
        assert len(slugs(project)) == (5 if expected else 6)

    def test_a_non_member_gets_404_and_no_token_401(self, client_for, anonymous, project, outsider):
        assert client_for(outsider).post(statuses_url(project), {"label": "QA"}).status_code == 404
        assert anonymous.post(statuses_url(project), {"label": "QA"}).status_code == 401
        assert slugs(project) == DEFAULT


class TestUpdate:
    def test_a_manager_renames_recolours_hides_and_the_slug_stays(self, client_for, project, manager,
                                                                   board_listener,
                                                                   django_capture_on_commit_callbacks):
        api = client_for(manager)
        with django_capture_on_commit_callbacks(execute=True):
            response = api.post(statuses_url(project, "/review/update"),
                                {"label": "Checking", "color": "#00FF00", "hidden": True, "category": "active"})
        status = {"slug": "review", "label": "Checking", "color": "#00ff00", "icon": "bi-eye", "category": "active",
                  "hidden": True}
        assert (response.status_code, response.json()) == (200, {"status": status})
        assert [frame["event"] for frame in board_listener.frames()] == ["status.updated"]
        board = api.get(f"/api/v1/projects/{project.id}/board").json()
        assert board["columns"][3] == {"status": "review", "hidden": True, "tickets": []}
        assert api.post(statuses_url(project, "/review/update"), {"hidden": False}).json()["status"] == {
            **status, "hidden": False}

    @pytest.mark.parametrize(("role", "expected"), ROLE_LADDER)
    def test_only_managers_change(self, client_for, project, member_with, role, expected):
        response = client_for(member_with(role)).post(statuses_url(project, "/todo/update"), {"label": "Next"})
        assert response.status_code == (expected or 200)
        assert status_of(project, "todo").label == ("To do" if expected else "Next")

    def test_an_unknown_slug_or_another_projects_is_404(self, client_for, project, manager):
        response = client_for(manager).post(statuses_url(project, "/nowhere/update"), {"label": "Next"})
        assert (response.status_code, response.json()["error"]) == (404, "status not found")

    def test_a_bad_value_is_422(self, client_for, project, manager):
        response = client_for(manager).post(statuses_url(project, "/todo/update"), {"label": "", "color": "#fff"})
        assert response.status_code == 422
        assert rows(project)[1] == ("todo", "To do", "#0d6efd", "todo", False)


class TestDelete:
    def test_a_manager_deletes_an_empty_column(self, client_for, project, manager, board_listener,
                                               django_capture_on_commit_callbacks):
        with django_capture_on_commit_callbacks(execute=True):
            response = client_for(manager).post(statuses_url(project, "/review/delete"))
        assert (response.status_code, response.json()) == (200, {"ok": True})
        assert slugs(project) == ["backlog", "todo", "in_progress", "done"]
        [frame] = board_listener.frames()
        assert (frame["event"], frame["status"]["slug"]) == ("status.deleted", "review")

    def test_deleted_tickets_move_to_the_first_column_that_stays(self, client_for, project, manager):
        gone = TicketFactory(project=project, status=status_of(project, "backlog"), deleted_at=timezone.now())
        assert client_for(manager).post(statuses_url(project, "/backlog/delete")).status_code == 200
        gone.refresh_from_db()
        assert gone.status.slug == "todo"

    @pytest.mark.parametrize("archived", [False, True])
    def test_a_column_with_a_ticket_on_the_board_or_archived_stays(self, client_for, project, manager, archived):
        TicketFactory(project=project, status=status_of(project, "review"),
                      archived_at=timezone.now() if archived else None)
        response = client_for(manager).post(statuses_url(project, "/review/delete"))
        assert (response.status_code, response.json()["error"]) == (
            422, "status: the column still holds 1 ticket (archived ones count): move or delete them first")
        assert slugs(project) == DEFAULT

    def test_the_last_column_stays(self, client_for, project, manager):
        api = client_for(manager)
        for slug in DEFAULT[:-1]:
            assert api.post(statuses_url(project, f"/{slug}/delete")).status_code == 200
        response = api.post(statuses_url(project, "/done/delete"))
        assert (response.status_code, response.json()["error"]) == (422, "status: a project keeps at least one status")
        assert slugs(project) == ["done"]

    @pytest.mark.parametrize(("role", "expected"), ROLE_LADDER)
    def test_only_managers_delete(self, client_for, project, member_with, role, expected):
        response = client_for(member_with(role)).post(statuses_url(project, "/review/delete"))
        assert response.status_code == (expected or 200)
        assert ("review" in slugs(project)) == bool(expected)

    def test_a_non_member_gets_404(self, client_for, project, outsider):
        assert client_for(outsider).post(statuses_url(project, "/review/delete")).status_code == 404
        assert slugs(project) == DEFAULT


class TestSort:
    def test_a_manager_reorders_the_columns(self, client_for, project, manager, board_listener,
                                            django_capture_on_commit_callbacks):
        order = ["done", "review", "in_progress", "todo", "backlog"]
        api = client_for(manager)
        with django_capture_on_commit_callbacks(execute=True):
            response = api.post(statuses_url(project, "/sort"), {"slugs": order})
        assert (response.status_code, response.json()) == (200, {"ok": True})
        assert [s["slug"] for s in api.get(statuses_url(project)).json()["statuses"]] == order
        assert [c["status"] for c in api.get(f"/api/v1/projects/{project.id}/board").json()["columns"]] == order
        [frame] = board_listener.frames()
        assert (frame["event"], frame["slugs"]) == ("statuses.sorted", order)

    @pytest.mark.parametrize("order", [
        ["done", "review", "in_progress", "todo"],
        ["done", "review", "in_progress", "todo", "backlog", "backlog"],
        ["done", "review", "in_progress", "todo", "elsewhere"],
        [],
    ])
    def test_anything_but_every_slug_once_is_422(self, client_for, project, manager, order):
        response = client_for(manager).post(statuses_url(project, "/sort"), {"slugs": order})
        assert (response.status_code, response.json()["error"]) == (
            422, "slugs: must list every status of the project exactly once")
        assert slugs(project) == DEFAULT

    @pytest.mark.parametrize(("role", "expected"), ROLE_LADDER)
    def test_only_managers_sort(self, client_for, project, member_with, role, expected):
        order = list(reversed(DEFAULT))
        response = client_for(member_with(role)).post(statuses_url(project, "/sort"), {"slugs": order})
        assert response.status_code == (expected or 200)
        assert slugs(project) == (DEFAULT if expected else order)


def test_the_list_takes_a_fixed_number_of_queries(client_for, project, manager, django_assert_max_num_queries):
    api = client_for(manager)
    api.get(statuses_url(project))  # the token's first use is written once
    for count in (5, 40):
        while len(slugs(project)) < count:
            api.post(statuses_url(project), {"label": "More"})
        with django_assert_max_num_queries(3):  # token, membership with its project, the statuses
            assert len(api.get(statuses_url(project)).json()["statuses"]) == count
