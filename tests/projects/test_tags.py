import pytest
from django.utils import timezone

from projects.models import Tag
from projects.roles import Role
from tests.factories import TagFactory, TicketFactory
from tests.tickets.conftest import BoardListener
from tickets.broadcast import board_group
from tickets.models import Activity


def tags_url(project):
    return f"/api/v1/projects/{project.id}/tags"


def delete_url(tag):
    return f"/api/v1/projects/{tag.project_id}/tags/{tag.id}/delete"


ROLE_LADDER = [(Role.VIEWER, 403), (Role.CONTRIBUTOR, 403), (Role.EDITOR, 403), (Role.DEVELOPER, 403),
               (Role.MANAGER, None)]


class TestList:
    def test_lists_tags_in_order(self, client_for, project, viewer):
        second = TagFactory(project=project, name="ui", color="#112233", sort_order=2)
        first = TagFactory(project=project, name="backend", sort_order=1)
        TagFactory()  # another project

        response = client_for(viewer).get(tags_url(project))

        assert response.status_code == 200
        assert response.json() == {"tags": [
            {"id": first.id, "name": "backend", "color": "#aabbcc", "sort_order": 1},
            {"id": second.id, "name": "ui", "color": "#112233", "sort_order": 2},
        ]}

    def test_non_member_404_and_anonymous_401(self, client_for, anonymous, project, outsider):
        assert client_for(outsider).get(tags_url(project)).status_code == 404
        assert anonymous.get(tags_url(project)).status_code == 401


class TestCreate:
    def test_manager_creates_tag_at_the_end_with_default_color(self, client_for, project, manager):
        TagFactory(project=project, sort_order=4)
        response = client_for(manager).post(tags_url(project), {"name": "urgent-fix"})

        assert response.status_code == 201
        tag = Tag.objects.get(name="urgent-fix")
        assert response.json() == {"tag": {"id": tag.id, "name": "urgent-fix", "color": "#6c757d", "sort_order": 5}}
        assert tag.project == project

    def test_color_is_accepted_and_lower_cased(self, client_for, project, manager):
        response = client_for(manager).post(tags_url(project), {"name": "ui", "color": "#A1B2C3"})
        assert response.json()["tag"]["color"] == "#a1b2c3"

    @pytest.mark.parametrize(("role", "expected"), ROLE_LADDER)
    def test_only_managers_create(self, client_for, project, member_with, role, expected):
        response = client_for(member_with(role)).post(tags_url(project), {"name": "x"})
        assert response.status_code == (expected or 201)
        if expected:
            assert response.json() == {"code": "forbidden", "error": "your role in this project does not allow this"}
            assert not Tag.objects.exists()

    @pytest.mark.parametrize(("body", "error"), [
        ({}, "name is required"),
        ({"name": ""}, "name cannot be empty"),
        ({"name": "x" * 101}, "name: Ensure this field has no more than 100 characters."),
        ({"name": "ok", "color": "red"}, "color: must be a hex color like #1a2b3c"),
        ({"name": "ok", "color": "#12345"}, "color: must be a hex color like #1a2b3c"),
    ])
    def test_invalid_body_is_422(self, client_for, project, manager, body, error):
        response = client_for(manager).post(tags_url(project), body)
        assert (response.status_code, response.json()["error"]) == (422, error)
        assert not Tag.objects.exists()

    def test_duplicate_name_is_422(self, client_for, project, manager):
        TagFactory(project=project, name="Backend")
        response = client_for(manager).post(tags_url(project), {"name": "backend"})
        assert response.status_code == 422
        assert response.json() == {
            "code": "validation_failed", "error": "name: a tag with this name already exists", "field": "name"}
        assert Tag.objects.count() == 1

    def test_a_name_of_100_characters_is_fine(self, client_for, project, manager):
        assert client_for(manager).post(tags_url(project), {"name": "x" * 100}).status_code == 201

    def test_non_member_404(self, client_for, project, outsider):
        assert client_for(outsider).post(tags_url(project), {"name": "x"}).status_code == 404
        assert not Tag.objects.exists()


class TestDelete:
    def test_manager_deletes_tag_and_it_leaves_every_ticket(self, client_for, project, manager):
        tag, kept = TagFactory(project=project), TagFactory(project=project)
        tickets = [TicketFactory(project=project, tags=[tag, kept]) for _ in range(3)]

        response = client_for(manager).post(delete_url(tag))

        assert (response.status_code, response.json()) == (200, {"ok": True})
        assert not Tag.objects.filter(pk=tag.pk).exists()
        for ticket in tickets:
            assert list(ticket.tags.all()) == [kept]

    def test_every_card_refreshes_in_one_message_and_fixed_queries(self, client_for, project, manager,
                                                                   django_assert_max_num_queries,
                                                                   django_capture_on_commit_callbacks):
        listener = BoardListener(board_group(project.id))
        api = client_for(manager)
        api.get(tags_url(project))  # the token's first use is written once
        carried = []
        # Up to 199 tickets: past that, SQLite's 999-parameter limit splits the history INSERT in two.
        for count in (20, 190):
            tag = TagFactory(project=project)
            tickets = [TicketFactory(project=project, tags=[tag]) for _ in range(count)]
            # Over the 21 before: the event log's rows (two INSERTs at 190 on SQLite, past its batch size),
            # and the tag.deleted event (its seq and its row).
            with django_assert_max_num_queries(24), django_capture_on_commit_callbacks(execute=True):
                assert api.post(delete_url(tag)).status_code == 200
            carried.append([t.id for t in tickets])
            assert Activity.objects.filter(ticket__in=tickets, action="updated").count() == count
        # Drained once: on Redis a channel is read from one event loop. Per deletion: one message with every
        # card, then the tag.deleted event.
        messages = listener.messages()
        listener.close()
        cards, deletions = messages[0::2], messages[1::2]
        assert [sorted(frame["ticket"]["id"] for frame in message["frames"]) for message in cards] == carried
        assert {frame["event"] for message in cards for frame in message["frames"]} == {"ticket.updated"}
        assert [[frame["event"] for frame in message["frames"]] for message in deletions] == [["tag.deleted"]] * 2

    @pytest.mark.parametrize(("role", "expected"), ROLE_LADDER)
    def test_only_managers_delete(self, client_for, project, member_with, role, expected):
        tag = TagFactory(project=project)
        response = client_for(member_with(role)).post(delete_url(tag))
        assert response.status_code == (expected or 200)
        assert Tag.objects.filter(pk=tag.pk).exists() == bool(expected)

    def test_tag_of_another_project_is_404(self, client_for, project, manager):
        foreign = TagFactory()
        response = client_for(manager).post(f"/api/v1/projects/{project.id}/tags/{foreign.id}/delete")
        assert (response.status_code, response.json()) == (404, {"code": "not_found", "error": "tag not found"})
        assert Tag.objects.filter(pk=foreign.pk).exists()

    def test_get_is_405(self, client_for, project, manager):
        tag = TagFactory(project=project)
        assert client_for(manager).get(delete_url(tag)).status_code == 405


def update_url(tag):
    return f"/api/v1/projects/{tag.project_id}/tags/{tag.id}/update"


class TestUpdate:
    def test_a_manager_renames_and_recolours_and_the_cards_show_it(self, client_for, project, manager,
                                                                    django_capture_on_commit_callbacks):
        tag = TagFactory(project=project, name="ui", color="#112233", sort_order=3)
        on_board = TicketFactory(project=project, tags=[tag])
        TicketFactory(project=project, tags=[tag], archived_at=timezone.now())
        listener = BoardListener(board_group(project.id))
        with django_capture_on_commit_callbacks(execute=True):
            response = client_for(manager).post(update_url(tag), {"name": "Frontend", "color": "#AABBCC"})
        frames = [frame for message in listener.messages() for frame in message["frames"]]
        listener.close()

        shape = {"id": tag.id, "name": "Frontend", "color": "#aabbcc", "sort_order": 3}
        assert (response.status_code, response.json()) == (200, {"tag": shape})
        assert [(frame["event"], frame.get("ticket", {}).get("id")) for frame in frames] == [
            ("ticket.updated", on_board.id), ("tag.updated", None)]
        assert frames[0]["ticket"]["tags"] == [{"id": tag.id, "name": "Frontend", "color": "#aabbcc"}]
        assert frames[1]["tag"] == shape
        assert not Activity.objects.filter(action="updated").exists()  # the tickets' tags did not change

    def test_only_what_is_sent_changes(self, client_for, project, manager):
        tag = TagFactory(project=project, name="ui", color="#112233")
        assert client_for(manager).post(update_url(tag), {"color": "#445566"}).json()["tag"]["name"] == "ui"
        tag.refresh_from_db()
        assert (tag.name, tag.color) == ("ui", "#445566")

    def test_a_name_another_tag_has_is_422_but_its_own_in_another_case_is_fine(self, client_for, project, manager):
        tag, other = TagFactory(project=project, name="ui"), TagFactory(project=project, name="Backend")
        api = client_for(manager)
        response = api.post(update_url(tag), {"name": "backend"})
        assert (response.status_code, response.json()["error"]) == (422, "name: a tag with this name already exists")
        assert api.post(update_url(tag), {"name": "UI"}).json()["tag"]["name"] == "UI"
        assert list(Tag.objects.order_by("pk").values_list("name", flat=True)) == ["UI", "Backend"]
        assert other.name == "Backend"

    @pytest.mark.parametrize(("body", "error"), [
        ({"name": ""}, "name cannot be empty"),
        ({"name": "x" * 101}, "name: Ensure this field has no more than 100 characters."),
        ({"color": "red"}, "color: must be a hex color like #1a2b3c"),
    ])
    def test_a_bad_value_is_422(self, client_for, project, manager, body, error):
        tag = TagFactory(project=project, name="ui", color="#112233")
        response = client_for(manager).post(update_url(tag), body)
        assert (response.status_code, response.json()["error"]) == (422, error)
        tag.refresh_from_db()
        assert (tag.name, tag.color) == ("ui", "#112233")

    @pytest.mark.parametrize(("role", "expected"), ROLE_LADDER)
    def test_only_managers_update(self, client_for, project, member_with, role, expected):
        tag = TagFactory(project=project, name="ui")
        response = client_for(member_with(role)).post(update_url(tag), {"name": "UX"})
        assert response.status_code == (expected or 200)
        tag.refresh_from_db()
        assert tag.name == ("ui" if expected else "UX")

    def test_another_projects_tag_is_404_and_no_token_401(self, client_for, anonymous, project, manager):
        foreign = TagFactory(name="ui")
        response = client_for(manager).post(f"/api/v1/projects/{project.id}/tags/{foreign.id}/update", {"name": "x"})
        assert (response.status_code, response.json()["error"]) == (404, "tag not found")
        assert anonymous.post(update_url(foreign), {"name": "x"}).status_code == 401
        foreign.refresh_from_db()
        assert foreign.name == "ui"
