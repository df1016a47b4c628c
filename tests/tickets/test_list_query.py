"""The ticket list's filters and cursor pages (decisions.md, "API conventions for integrators")."""

from datetime import timedelta
from urllib.parse import urlencode

import pytest
from django.utils import timezone

from tests.factories import TagFactory, TicketFactory, UserFactory
from tickets.models import Ticket

from .conftest import status_of


def listed(api, project, **params) -> list[int]:
    response = api.get(list_url(project, **params))
    assert response.status_code == 200, response.json()
    return [ticket["id"] for ticket in response.json()["tickets"]]


def list_url(project, **params) -> str:
    return f"/api/v1/projects/{project.id}/tickets?{urlencode(params, doseq=True)}"


@pytest.fixture
def api(client_for, editor):
    return client_for(editor)


class TestFilters:
    def test_each_filter(self, api, project, editor, manager):
        urgent_tag, backend = TagFactory(project=project), TagFactory(project=project)
        mine = TicketFactory(project=project, assignees=[editor], tags=[urgent_tag, backend], priority="urgent")
        theirs = TicketFactory(project=project, assignees=[manager], tags=[urgent_tag], type="bug")
        nobodys = TicketFactory(project=project, status=status_of(project, "done"))
        Ticket.objects.filter(pk=nobodys.pk).update(updated_at=timezone.now() + timedelta(hours=1))
        later = (timezone.now() + timedelta(minutes=30)).strftime("%Y-%m-%d %H:%M:%S")
        assert listed(api, project, assignee="me") == [mine.pk]
        assert listed(api, project, assignee=manager.pk) == [theirs.pk]
        assert listed(api, project, tag=urgent_tag.pk) == [mine.pk, theirs.pk]
        assert listed(api, project, tag=[urgent_tag.pk, backend.pk]) == [mine.pk]  # all of them
        assert listed(api, project, priority="urgent") == [mine.pk]
        assert listed(api, project, type="bug") == [theirs.pk]
        assert listed(api, project, status="done") == [nobodys.pk]
        assert listed(api, project, updated_after=later) == [nobodys.pk]
        assert listed(api, project, tag=urgent_tag.pk, type="bug", assignee=manager.pk) == [theirs.pk]
        assert listed(api, project, assignee=UserFactory().pk) == []

    def test_without_filters_the_whole_list_in_its_shape(self, api, project):
        TicketFactory.create_batch(3, project=project)
        body = api.get(list_url(project)).json()
        assert list(body) == ["tickets"] and len(body["tickets"]) == 3

    @pytest.mark.parametrize(("params", "message", "field"), [
        ({"assigne": "me"}, "assigne: unknown query parameter", "assigne"),
        ({"assignee": "someone"}, "assignee: must be a user id or me", "assignee"),
        ({"tag": "urgent"}, "tag: must be tag ids", "tag"),
        ({"tag": 999999}, "tag: unknown tag 999999", "tag"),
        ({"priority": "soon"}, "priority: unknown priority soon", "priority"),
        ({"type": "epic"}, "type: unknown type epic", "type"),
        ({"status": "nope"}, "status: unknown status nope", "status"),
        ({"updated_after": "2026-01-01"}, "updated_after: must be YYYY-MM-DD HH:MM:SS (UTC)", "updated_after"),
        ({"limit": 0}, "limit: Ensure this value is greater than or equal to 1.", "limit"),
        ({"limit": 501}, "limit: Ensure this value is less than or equal to 500.", "limit"),
        ({"limit": "ten"}, "limit: A valid integer is required.", "limit"),
        ({"cursor": "bm90IGEgY3Vyc29y"}, "cursor: not a cursor this list gave", "cursor"),
    ])
    def test_a_bad_value_or_an_unknown_parameter_is_422_naming_it(self, api, project, params, message, field):
        TicketFactory(project=project)
        response = api.get(list_url(project, **params))
        assert (response.status_code, response.json()) == (422, {
            "code": "validation_failed", "error": message, "field": field})

    @pytest.mark.parametrize(("name", "values"), [
        ("priority", ["high", "low"]), ("type", ["bug", "bug"]), ("status", ["todo", "done"]),
        ("assignee", ["me", "me"]), ("updated_after", ["2026-01-01 00:00:00"] * 2), ("limit", [2, 3]),
        ("cursor", ["a", "b"]),
    ])
    def test_a_parameter_given_twice_is_422_naming_it(self, api, project, name, values):
        TicketFactory(project=project)
        response = api.get(list_url(project, **{name: values}))
        assert (response.status_code, response.json()) == (422, {
            "code": "validation_failed", "error": f"{name}: given more than once",
                                                                  "field": name})

    @pytest.mark.parametrize(("params", "message", "field"), [
        ({"status": "to\x00do"}, "status: must be a status slug", "status"),
        ({"tag": "1\x00"}, "tag: must be tag ids", "tag"),
    ])
    def test_a_nul_is_a_bad_value_of_its_parameter(self, api, project, params, message, field):
        response = api.get(list_url(project, **params))
        assert (response.status_code, response.json()) == (422, {
            "code": "validation_failed", "error": message, "field": field})

    def test_another_projects_tag_is_unknown(self, api, project):
        response = api.get(list_url(project, tag=TagFactory().pk))
        assert response.status_code == 422 and response.json()["field"] == "tag"


class TestPages:
    def test_pages_follow_each_other_to_the_end(self, api, project):
        tickets = TicketFactory.create_batch(5, project=project)
        first = api.get(list_url(project, limit=2))
        body = first.json()
        assert [t["id"] for t in body["tickets"]] == [t.pk for t in tickets[:2]]
        assert body["next_cursor"] and first["Link"] == (
            f'<http://testserver{list_url(project, limit=2, cursor=body["next_cursor"])}>; rel="next"')
        second = api.get(first["Link"][1:].split(">")[0]).json()
        assert [t["id"] for t in second["tickets"]] == [t.pk for t in tickets[2:4]]
        last = api.get(list_url(project, cursor=second["next_cursor"]))
        assert (last.json()["tickets"][0]["id"], last.json()["next_cursor"], last.has_header("Link")) == (
            tickets[4].pk, None, False)

    def test_a_page_keeps_the_filters_and_a_cursor_only_goes_with_them(self, api, project):
        bugs = TicketFactory.create_batch(3, project=project, type="bug")
        TicketFactory.create_batch(2, project=project)
        body = api.get(list_url(project, type="bug", limit=2)).json()
        rest = api.get(list_url(project, type="bug", limit=2, cursor=body["next_cursor"])).json()
        assert [t["id"] for t in rest["tickets"]] == [bugs[2].pk]
        for other in ({"type": "feature", "cursor": body["next_cursor"]},
                      {"type": "bug", "limit": 3, "cursor": body["next_cursor"]}):
            response = api.get(list_url(project, **other))
            assert (response.status_code, response.json()["field"]) == (422, "cursor")

    def test_a_ticket_moved_meanwhile_is_not_listed_twice(self, api, project, editor):
        tickets = TicketFactory.create_batch(4, project=project)
        body = api.get(list_url(project, limit=2)).json()
        Ticket.objects.filter(pk=tickets[0].pk).update(sort_order=tickets[3].sort_order + 1)  # to the end
        rest = api.get(list_url(project, cursor=body["next_cursor"])).json()
        assert [t["id"] for t in rest["tickets"]] == [tickets[2].pk, tickets[3].pk]
        assert rest["next_cursor"] is not None  # the moved ticket comes on the next page

    def test_a_page_of_a_hundred_and_more_carries_each_tickets_parts(self, api, project):
        tag = TagFactory(project=project)
        tickets = TicketFactory.create_batch(102, project=project, tags=[tag])
        body = api.get(list_url(project, limit=100)).json()
        assert [t["id"] for t in body["tickets"]] == [t.pk for t in tickets[:100]]
        assert {tuple(tag["id"] for tag in t["tags"]) for t in body["tickets"]} == {(tag.pk,)}
        rest = api.get(list_url(project, limit=100, cursor=body["next_cursor"])).json()
        assert ([t["id"] for t in rest["tickets"]], rest["next_cursor"]) == ([t.pk for t in tickets[100:]], None)

    def test_fixed_query_count_at_two_sizes(self, api, project, django_assert_max_num_queries):
        api.get(list_url(project))
        for size in (10, 120):
            TicketFactory.create_batch(size - Ticket.objects.filter(project=project).count(), project=project,
                                       tags=[TagFactory(project=project)])
            body = api.get(list_url(project, limit=5)).json()
            with django_assert_max_num_queries(6):
                assert api.get(list_url(project, limit=5, cursor=body["next_cursor"])).status_code == 200
