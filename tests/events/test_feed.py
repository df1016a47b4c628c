"""GET /api/v1/projects/{id}/events: the kept frames after a seq, oldest first, a page at a time."""

from datetime import timedelta

import pytest
from django.utils import timezone

from core.time import timestamp
from events.models import ProjectEvent
from tests.factories import ProjectFactory

from .conftest import write_events


def url(project, query: str = "") -> str:
    return f"/api/v1/projects/{project.id}/events{query}"


def test_pages_through_the_log_oldest_first(client_for, project, manager, viewer):
    write_events(project, manager, 5)
    api = client_for(viewer)  # any member reads it

    first = api.get(url(project, "?limit=2")).json()
    assert [e["seq"] for e in first["events"]] == [1, 2]
    assert (first["next_after"], first["has_more"]) == (2, True)
    second = api.get(url(project, f"?after={first['next_after']}&limit=2")).json()
    assert ([e["seq"] for e in second["events"]], second["next_after"], second["has_more"]) == ([3, 4], 4, True)
    last = api.get(url(project, "?after=4&limit=2")).json()
    assert ([e["seq"] for e in last["events"]], last["next_after"], last["has_more"]) == ([5], 5, False)
    empty = api.get(url(project, "?after=5")).json()
    assert empty == {"events": [], "next_after": 5, "has_more": False}


def test_an_event_is_the_frame_as_sent_plus_when(client_for, project, manager):
    write_events(project, manager, 1)
    row = ProjectEvent.objects.get()
    [event] = client_for(manager).get(url(project)).json()["events"]
    created_at = event.pop("created_at")
    assert event == {"event": "ticket.updated", "n": 0, "project_id": project.id, "seq": 1,
                     "actor": {"id": manager.id, "name": manager.display_name},
                     "occurred_at": timestamp(row.created_at)} == row.payload
    assert created_at == timestamp(row.created_at)


def test_default_page_is_100_and_at_most_500(client_for, project, manager):
    write_events(project, manager, 501)
    api = client_for(manager)
    default = api.get(url(project)).json()
    assert (len(default["events"]), default["next_after"], default["has_more"]) == (100, 100, True)
    most = api.get(url(project, "?limit=500")).json()
    assert (len(most["events"]), most["next_after"], most["has_more"]) == (500, 500, True)


def test_only_this_projects_events(client_for, project, manager):
    other = ProjectFactory(owner=manager)
    write_events(other, manager, 3)
    write_events(project, manager, 1)
    assert [e["project_id"] for e in client_for(manager).get(url(project)).json()["events"]] == [project.id]


@pytest.mark.parametrize("query", ["?after=-1", "?after=x", "?limit=0", "?limit=501", "?limit=ten", "?after=1.5"])
def test_bad_values_are_422(client_for, project, manager, query):
    response = client_for(manager).get(url(project, query))
    assert response.status_code == 422


def test_roles(client_for, anonymous, project, viewer, outsider):
    assert client_for(viewer).get(url(project)).status_code == 200
    assert client_for(outsider).get(url(project)).status_code == 404
    assert anonymous.get(url(project)).status_code == 401
    assert client_for(viewer).get(f"/api/v1/projects/{project.id + 999}/events").status_code == 404


@pytest.mark.parametrize("count", [3, 300])
def test_a_fixed_number_of_queries(client_for, project, manager, count, django_assert_num_queries):
    write_events(project, manager, count)
    api = client_for(manager)
    api.get(url(project))  # the token's first use is written once
    with django_assert_num_queries(3):  # the token, the membership with its project, one page of events
        response = api.get(url(project, "?limit=500"))
    assert len(response.json()["events"]) == count


def test_pruned_events_are_gone_from_the_feed(client_for, project, manager):
    write_events(project, manager, 3)
    ProjectEvent.objects.filter(seq__lte=2).update(created_at=timezone.now() - timedelta(days=30))
    from events.services import prune_events
    assert prune_events() == 2
    assert [e["seq"] for e in client_for(manager).get(url(project)).json()["events"]] == [3]
