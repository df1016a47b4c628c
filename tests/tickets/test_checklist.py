"""Checklist items: add, toggle, update, delete, sort; history, board frames and ticket detail."""

import pytest
from django.utils import timezone

from projects.roles import Role
from tests.factories import TicketFactory
from tickets.models import Activity, ChecklistItem

from .conftest import ticket_url

EDITOR_LADDER = [(Role.VIEWER, 403), (Role.CONTRIBUTOR, 403), (Role.EDITOR, None), (Role.DEVELOPER, None),
                 (Role.MANAGER, None)]


def add_url(ticket) -> str:
    return f"/api/v1/tickets/{ticket.id}/checklist"


def sort_url(ticket) -> str:
    return f"/api/v1/tickets/{ticket.id}/checklist/sort"


def item_url(item, action: str) -> str:
    return f"/api/v1/checklist/{item.id}/{action}"


@pytest.fixture
def items(ticket):
    return [ChecklistItem.objects.create(ticket=ticket, text=text, sort_order=index)
            for index, text in enumerate(["Reproduce", "Fix", "Test"])]


def rows(ticket) -> list[tuple]:
    return list(ChecklistItem.objects.filter(ticket=ticket).values_list("text", "done", "sort_order"))


def board_counts(frame) -> tuple:
    return frame["event"], frame["ticket"]["checklist_total"], frame["ticket"]["checklist_done"]


class TestAdd:
    def test_appends_at_the_end_not_done(self, client_for, editor, ticket, items, board_listener,
                                         django_capture_on_commit_callbacks):
        items[1].delete()  # a gap in sort_order: still the end
        api = client_for(editor)
        with django_capture_on_commit_callbacks(execute=True):
            response = api.post(add_url(ticket), {"text": "Release"})

        item = ChecklistItem.objects.get(text="Release")
        assert (response.status_code, response.json()) == (201, {"ok": True, "item": {
            "id": item.id, "ticket_id": ticket.id, "text": "Release", "done": 0, "sort_order": 3}})
        assert [entry["text"] for entry in api.get(ticket_url(ticket)).json()["ticket"]["checklist"]] == [
            "Reproduce", "Test", "Release"]
        activity = Activity.objects.get(ticket=ticket)
        assert (activity.action, activity.actor, activity.changes) == ("checklist_item_added", editor, {
            "checklist_item": {"old": None, "new": {"id": item.id, "text": "Release", "done": False}}})
        [frame] = board_listener.card_frames()
        assert board_counts(frame) == ("ticket.updated", 3, 0)

    def test_first_item_and_five_hundred_characters(self, client_for, editor, ticket):
        response = client_for(editor).post(add_url(ticket), {"text": "x" * 500})
        assert (response.status_code, response.json()["item"]["sort_order"]) == (201, 0)

    @pytest.mark.parametrize(("body", "error"), [
        ({}, "text is required"),
        ({"text": ""}, "text cannot be empty"),
        ({"text": "   "}, "text cannot be empty"),
        ({"text": "x" * 501}, "text: Ensure this field has no more than 500 characters."),
    ])
    def test_invalid_body_is_422_and_changes_nothing(self, client_for, editor, ticket, board_listener,
                                                     django_capture_on_commit_callbacks, body, error):
        with django_capture_on_commit_callbacks(execute=True):
            response = client_for(editor).post(add_url(ticket), body)
        assert (response.status_code, response.json()) == (422, {
            "code": "validation_failed", "error": error, "field": "text"})
        assert (ChecklistItem.objects.exists(), Activity.objects.exists(), board_listener.frames()) == (
            False, False, [])

    def test_archived_ticket_is_422(self, client_for, editor, project):
        ticket = TicketFactory(project=project, archived_at=timezone.now())
        response = client_for(editor).post(add_url(ticket), {"text": "late"})
        assert (response.status_code, response.json()) == (422, {
            "code": "validation_failed", "error": "ticket is archived: unarchive it first"})
        assert not ChecklistItem.objects.exists()

    @pytest.mark.parametrize(("role", "expected"), EDITOR_LADDER)
    def test_role_ladder(self, client_for, member_with, ticket, role, expected):
        response = client_for(member_with(role)).post(add_url(ticket), {"text": "By role"})
        assert response.status_code == (expected or 201)
        assert ChecklistItem.objects.exists() == (expected is None)

    def test_deleted_missing_and_non_member_404_anonymous_401(self, client_for, anonymous, editor, outsider,
                                                               project, ticket):
        deleted = TicketFactory(project=project, deleted_at=timezone.now())
        assert client_for(editor).post(add_url(deleted), {"text": "x"}).status_code == 404
        assert client_for(editor).post("/api/v1/tickets/999999/checklist", {"text": "x"}).status_code == 404
        assert client_for(outsider).post(add_url(ticket), {"text": "x"}).status_code == 404
        assert anonymous.post(add_url(ticket), {"text": "x"}).status_code == 401
        assert not ChecklistItem.objects.exists()


class TestToggle:
    def test_flips_done_both_ways(self, client_for, editor, ticket, items, board_listener,
                                  django_capture_on_commit_callbacks):
        api = client_for(editor)
        with django_capture_on_commit_callbacks(execute=True):
            first = api.post(item_url(items[0], "toggle"))
        assert (first.status_code, first.json()) == (200, {"ok": True, "done": 1})
        assert api.get(ticket_url(ticket)).json()["ticket"]["checklist"][0] == {
            "id": items[0].id, "text": "Reproduce", "done": 1}
        activity = Activity.objects.get(ticket=ticket)
        assert (activity.action, activity.changes) == ("checklist_item_toggled", {"checklist_item": {
            "old": {"id": items[0].id, "done": False}, "new": {"id": items[0].id, "done": True}}})
        [frame] = board_listener.card_frames()
        assert board_counts(frame) == ("ticket.updated", 3, 1)

        assert api.post(item_url(items[0], "toggle")).json() == {"ok": True, "done": 0}
        assert ChecklistItem.objects.get(pk=items[0].pk).done is False

    @pytest.mark.parametrize(("role", "expected"), EDITOR_LADDER)
    def test_role_ladder(self, client_for, member_with, items, role, expected):
        assert client_for(member_with(role)).post(item_url(items[0], "toggle")).status_code == (expected or 200)
        assert ChecklistItem.objects.get(pk=items[0].pk).done == (expected is None)

    def test_archived_ticket_is_422(self, client_for, editor, ticket, items):
        ticket.archived_at = timezone.now()
        ticket.save()
        assert client_for(editor).post(item_url(items[0], "toggle")).status_code == 422
        assert (ChecklistItem.objects.get(pk=items[0].pk).done, Activity.objects.exists()) == (False, False)


class TestUpdate:
    def test_renames_without_a_board_frame(self, client_for, editor, ticket, items, board_listener,
                                           django_capture_on_commit_callbacks):
        with django_capture_on_commit_callbacks(execute=True):
            response = client_for(editor).post(item_url(items[1], "update"), {"text": "Fix for real"})
        assert (response.status_code, response.json()) == (200, {"ok": True})
        assert rows(ticket) == [("Reproduce", False, 0), ("Fix for real", False, 1), ("Test", False, 2)]
        activity = Activity.objects.get(ticket=ticket)
        assert (activity.action, activity.changes) == ("checklist_item_updated", {"checklist_item": {
            "old": {"id": items[1].id, "text": "Fix"}, "new": {"id": items[1].id, "text": "Fix for real"}}})
        assert board_listener.card_frames() == []  # the board shows counts only

    def test_the_same_text_changes_nothing(self, client_for, editor, items):
        assert client_for(editor).post(item_url(items[1], "update"), {"text": "Fix"}).status_code == 200
        assert not Activity.objects.exists()

    @pytest.mark.parametrize(("body", "error"), [
        ({}, "text is required"),
        ({"text": ""}, "text cannot be empty"),
        ({"text": "x" * 501}, "text: Ensure this field has no more than 500 characters."),
    ])
    def test_invalid_body_is_422_and_changes_nothing(self, client_for, editor, ticket, items, body, error):
        response = client_for(editor).post(item_url(items[1], "update"), body)
        assert (response.status_code, response.json()) == (422, {
            "code": "validation_failed", "error": error, "field": "text"})
        assert (ChecklistItem.objects.get(pk=items[1].pk).text, Activity.objects.exists()) == ("Fix", False)

    @pytest.mark.parametrize(("role", "expected"), EDITOR_LADDER)
    def test_role_ladder(self, client_for, member_with, items, role, expected):
        response = client_for(member_with(role)).post(item_url(items[1], "update"), {"text": "By role"})
        assert response.status_code == (expected or 200)

    def test_archived_ticket_is_422(self, client_for, editor, ticket, items):
        ticket.archived_at = timezone.now()
        ticket.save()
        assert client_for(editor).post(item_url(items[1], "update"), {"text": "late"}).status_code == 422
        assert ChecklistItem.objects.get(pk=items[1].pk).text == "Fix"


class TestDelete:
    def test_deletes_and_the_board_counts_one_less(self, client_for, editor, ticket, items, board_listener,
                                                   django_capture_on_commit_callbacks):
        items[2].done = True
        items[2].save()
        api = client_for(editor)
        with django_capture_on_commit_callbacks(execute=True):
            response = api.post(item_url(items[2], "delete"))
        assert (response.status_code, response.json()) == (200, {"ok": True})
        assert rows(ticket) == [("Reproduce", False, 0), ("Fix", False, 1)]
        activity = Activity.objects.get(ticket=ticket)
        assert (activity.action, activity.changes) == ("checklist_item_deleted", {"checklist_item": {
            "old": {"id": items[2].id, "text": "Test", "done": True}, "new": None}})
        [frame] = board_listener.card_frames()
        assert board_counts(frame) == ("ticket.updated", 2, 0)
        assert api.post(item_url(items[2], "delete")).json() == {
            "code": "not_found", "error": "checklist item not found"}

    @pytest.mark.parametrize(("role", "expected"), EDITOR_LADDER)
    def test_role_ladder(self, client_for, member_with, items, role, expected):
        assert client_for(member_with(role)).post(item_url(items[0], "delete")).status_code == (expected or 200)
        assert ChecklistItem.objects.filter(pk=items[0].pk).exists() == bool(expected)

    def test_archived_ticket_is_422(self, client_for, editor, ticket, items):
        ticket.archived_at = timezone.now()
        ticket.save()
        assert client_for(editor).post(item_url(items[0], "delete")).status_code == 422
        assert ChecklistItem.objects.count() == 3


@pytest.mark.parametrize("action", ["toggle", "update", "delete"])
def test_item_missing_on_a_deleted_ticket_or_of_another_project(client_for, anonymous, editor, outsider, project,
                                                                items, action):
    on_deleted = ChecklistItem.objects.create(ticket=TicketFactory(project=project, deleted_at=timezone.now()),
                                              text="gone")
    api = client_for(editor)
    for url in (item_url(on_deleted, action), f"/api/v1/checklist/999999/{action}"):
        response = api.post(url, {"text": "x"})
        assert (response.status_code, response.json()) == (404, {
            "code": "not_found", "error": "checklist item not found"})
    assert client_for(outsider).post(item_url(items[0], action), {"text": "x"}).status_code == 404
    assert anonymous.post(item_url(items[0], action), {"text": "x"}).status_code == 401
    assert rows(items[0].ticket) == [("Reproduce", False, 0), ("Fix", False, 1), ("Test", False, 2)]


class TestSort:
    def test_reorders_without_a_board_frame(self, client_for, editor, ticket, items, board_listener,
                                            django_capture_on_commit_callbacks):
        order = [items[2].id, items[0].id, items[1].id]
        api = client_for(editor)
        with django_capture_on_commit_callbacks(execute=True):
            response = api.post(sort_url(ticket), {"item_ids": order})
        assert (response.status_code, response.json()) == (200, {"ok": True})
        assert [entry["id"] for entry in api.get(ticket_url(ticket)).json()["ticket"]["checklist"]] == order
        assert rows(ticket) == [("Test", False, 0), ("Reproduce", False, 1), ("Fix", False, 2)]
        activity = Activity.objects.get(ticket=ticket)
        assert (activity.action, activity.changes) == ("checklist_sorted", {"checklist_order": {
            "old": [item.id for item in items], "new": order}})
        assert board_listener.card_frames() == []  # the board shows counts only

    def test_the_same_order_changes_nothing(self, client_for, editor, ticket, items):
        assert client_for(editor).post(sort_url(ticket), {"item_ids": [item.id for item in items]}).status_code == 200
        assert not Activity.objects.exists()

    def test_an_empty_checklist_sorts_to_nothing(self, client_for, editor, ticket):
        assert client_for(editor).post(sort_url(ticket), {"item_ids": []}).json() == {"ok": True}

    @pytest.mark.parametrize("make_ids", [
        lambda items, foreign: [items[0].id, items[1].id],
        lambda items, foreign: [item.id for item in items] + [foreign.id],
        lambda items, foreign: [items[0].id, items[0].id, items[1].id, items[2].id],
        lambda items, foreign: [items[0].id, items[1].id, foreign.id],
    ], ids=["missing", "extra", "duplicate", "foreign"])
    def test_not_exactly_the_items_is_422(self, client_for, editor, project, ticket, items, make_ids):
        foreign = ChecklistItem.objects.create(ticket=TicketFactory(project=project), text="elsewhere")
        response = client_for(editor).post(sort_url(ticket), {"item_ids": make_ids(items, foreign)})
        assert (response.status_code, response.json()) == (422, {"code": "validation_failed",
            "error": "item_ids: must list exactly the items of the ticket, each once", "field": "item_ids"})
        assert (rows(ticket), Activity.objects.exists()) == (
            [("Reproduce", False, 0), ("Fix", False, 1), ("Test", False, 2)], False)

    @pytest.mark.parametrize(("body", "error"), [
        ({}, "item_ids is required"),
        ({"item_ids": "1,2"}, 'item_ids: Expected a list of items but got type "str".'),
        ({"item_ids": ["a"]}, "item_ids[0]: A valid integer is required."),
    ])
    def test_invalid_body_is_422(self, client_for, editor, ticket, items, body, error):
        assert client_for(editor).post(sort_url(ticket), body).json() == {
            "code": "validation_failed", "error": error, "field": "item_ids"}

    def test_archived_ticket_is_422(self, client_for, editor, ticket, items):
        ticket.archived_at = timezone.now()
        ticket.save()
        response = client_for(editor).post(sort_url(ticket), {"item_ids": [item.id for item in reversed(items)]})
        assert response.status_code == 422
        assert rows(ticket)[0] == ("Reproduce", False, 0)

    @pytest.mark.parametrize(("role", "expected"), EDITOR_LADDER)
    def test_role_ladder(self, client_for, member_with, ticket, items, role, expected):
        response = client_for(member_with(role)).post(sort_url(ticket), {"item_ids": [i.id for i in reversed(items)]})
        assert response.status_code == (expected or 200)

    def test_non_member_404_and_anonymous_401(self, client_for, anonymous, outsider, ticket, items):
        assert client_for(outsider).post(sort_url(ticket), {"item_ids": []}).status_code == 404
        assert anonymous.post(sort_url(ticket), {"item_ids": []}).status_code == 401
