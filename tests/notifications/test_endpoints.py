"""The notification endpoints: exact shapes, refusals that change nothing, fixed query counts."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from notifications.models import Notification
from projects.models import Membership
from projects.roles import Role
from tests.factories import MembershipFactory, NotificationFactory, ProjectFactory, TicketFactory, UserFactory

LIST = "/api/v1/notifications"
COUNT = "/api/v1/notifications/unread-count"
MARK_TICKET = "/api/v1/notifications/mark-read-for-ticket"
MARK_ALL = "/api/v1/notifications/mark-all-read"


@pytest.fixture
def ada(project):
    return MembershipFactory(project=project, role=Role.VIEWER, user=UserFactory(username="ada")).user


@pytest.fixture
def other_ticket(project):
    return TicketFactory(project=project, title="Other")


def notify(user, ticket, **fields):
    return NotificationFactory(user=user, ticket=ticket, **fields)


def unread_ids(user) -> set[int]:
    return set(Notification.objects.filter(user=user, read_at__isnull=True).values_list("pk", flat=True))


# ---- list --------------------------------------------------------------------------------

def test_list_shape(client_for, ada, ticket, project):
    notification = notify(ada, ticket, type="mention", message="Bob mentioned you on APL-1")
    response = client_for(ada).get(LIST)
    assert (response.status_code, response.json()) == (200, {"notifications": [{
        "id": notification.pk, "type": "mention", "message": "Bob mentioned you on APL-1",
        "ticket_id": ticket.pk, "project_id": project.pk, "read_at": None,
        "created_at": notification.created_at.strftime("%Y-%m-%d %H:%M:%S"),
    }]})


def test_list_holds_the_20_most_recent_newest_first(client_for, ada, ticket):
    now = timezone.now()
    made = [notify(ada, ticket) for _ in range(25)]
    for age, notification in enumerate(made):
        Notification.objects.filter(pk=notification.pk).update(created_at=now - timedelta(minutes=age % 5))
    expected = sorted(made, key=lambda n: (made.index(n) % 5, -n.pk))[:20]  # newest, then the higher id
    ids = [item["id"] for item in client_for(ada).get(LIST).json()["notifications"]]
    assert ids == [n.pk for n in expected]


def test_list_filter_unread(client_for, ada, ticket):
    unread = notify(ada, ticket)
    notify(ada, ticket, read_at=timezone.now())
    api = client_for(ada)
    assert [n["id"] for n in api.get(LIST, {"filter": "unread"}).json()["notifications"]] == [unread.pk]
    assert len(api.get(LIST, {"filter": "all"}).json()["notifications"]) == 2
    assert len(api.get(LIST).json()["notifications"]) == 2


def test_a_read_notification_shows_when_it_was_read(client_for, ada, ticket):
    read_at = timezone.now().replace(microsecond=0)
    notify(ada, ticket, read_at=read_at)
    [item] = client_for(ada).get(LIST).json()["notifications"]
    assert item["read_at"] == read_at.strftime("%Y-%m-%d %H:%M:%S")


def test_only_the_callers_own_notifications(client_for, ada, ticket, manager):
    notify(manager, ticket)
    api = client_for(ada)
    assert (api.get(LIST).json(), api.get(COUNT).json()) == ({"notifications": []}, {"count": 0})


def test_a_former_member_no_longer_sees_that_projects_notifications(client_for, ada, ticket):
    elsewhere = ProjectFactory(prefix="OTH")
    MembershipFactory(project=elsewhere, user=ada)
    kept = notify(ada, TicketFactory(project=elsewhere))
    notify(ada, ticket)
    Membership.objects.filter(user=ada, project=ticket.project).delete()
    api = client_for(ada)
    assert [n["id"] for n in api.get(LIST).json()["notifications"]] == [kept.pk]
    assert api.get(COUNT).json() == {"count": 1}


# ---- unread count ------------------------------------------------------------------------

def test_unread_count(client_for, ada, ticket):
    notify(ada, ticket)
    notify(ada, ticket)
    notify(ada, ticket, read_at=timezone.now())
    response = client_for(ada).get(COUNT)
    assert (response.status_code, response.json()) == (200, {"count": 2})


# ---- mark read for ticket ----------------------------------------------------------------

def test_mark_read_for_ticket_marks_only_that_ticket(client_for, ada, ticket, other_ticket, manager):
    notify(ada, ticket)
    notify(ada, ticket)
    other = notify(ada, other_ticket)
    someone_elses = notify(manager, ticket)
    response = client_for(ada).post(MARK_TICKET, {"ticket_id": ticket.pk}, format="json")
    assert (response.status_code, response.json()) == (200, {"success": True, "unread_count": 1})
    assert unread_ids(ada) == {other.pk}
    assert unread_ids(manager) == {someone_elses.pk}


def test_mark_read_for_ticket_keeps_the_first_read_time(client_for, ada, ticket):
    first_read = timezone.now() - timedelta(days=3)
    read = notify(ada, ticket, read_at=first_read)
    client_for(ada).post(MARK_TICKET, {"ticket_id": ticket.pk}, format="json")
    assert Notification.objects.get(pk=read.pk).read_at == first_read


def test_mark_read_for_an_archived_ticket(client_for, ada, ticket):
    notify(ada, ticket)
    ticket.archived_at = timezone.now()
    ticket.save()
    assert client_for(ada).post(MARK_TICKET, {"ticket_id": ticket.pk}, format="json").json()["unread_count"] == 0


@pytest.mark.parametrize("case", ["not a member", "missing", "deleted"])
def test_mark_read_for_an_unseeable_ticket_is_404_and_marks_nothing(client_for, ada, ticket, case):
    notification = notify(ada, ticket)
    ticket_id = ticket.pk
    if case == "not a member":
        Membership.objects.filter(user=ada).delete()
    elif case == "missing":
        ticket_id = ticket.pk + 1000
    else:
        ticket.deleted_at = timezone.now()
        ticket.save()
    response = client_for(ada).post(MARK_TICKET, {"ticket_id": ticket_id}, format="json")
    assert (response.status_code, response.json()) == (404, {"code": "not_found", "error": "ticket not found"})
    assert unread_ids(ada) == {notification.pk}


@pytest.mark.parametrize(("body", "error"), [
    ({}, "ticket_id is required"),
    ({"ticket_id": None}, "ticket_id cannot be empty"),
    ({"ticket_id": "abc"}, "ticket_id: A valid integer is required."),
    ({"ticket_id": 0}, "ticket_id: Ensure this value is greater than or equal to 1."),
    ({"ticket_id": 2**63}, "ticket_id: Ensure this value is less than or equal to 9223372036854775807."),
])
def test_mark_read_for_ticket_needs_a_ticket_id(client_for, ada, ticket, body, error):
    notification = notify(ada, ticket)
    response = client_for(ada).post(MARK_TICKET, body, format="json")
    assert (response.status_code, response.json()) == (422, {
        "code": "validation_failed", "error": error, "field": "ticket_id"})
    assert unread_ids(ada) == {notification.pk}


# ---- mark all read -----------------------------------------------------------------------

def test_mark_all_read(client_for, ada, ticket, other_ticket, manager):
    notify(ada, ticket)
    notify(ada, other_ticket)
    someone_elses = notify(manager, ticket)
    response = client_for(ada).post(MARK_ALL, format="json")
    assert (response.status_code, response.json()) == (200, {"success": True, "unread_count": 0})
    assert (unread_ids(ada), unread_ids(manager)) == (set(), {someone_elses.pk})


# ---- authentication ----------------------------------------------------------------------

@pytest.mark.parametrize(("method", "path"), [("get", LIST), ("get", COUNT), ("post", MARK_TICKET), ("post", MARK_ALL)])
def test_without_a_token_401(anonymous, ada, ticket, method, path):
    notification = notify(ada, ticket)
    response = getattr(anonymous, method)(path, {"ticket_id": ticket.pk} if method == "post" else None,
                                          format="json" if method == "post" else None)
    assert response.status_code == 401
    assert set(response.json()) == {"error", "code"}
    assert unread_ids(ada) == {notification.pk}


# ---- scale -------------------------------------------------------------------------------

def queries_of(client, path: str, params=None) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(path, params).status_code == 200
    return len(captured)


@pytest.mark.parametrize("path,params", [(LIST, None), (LIST, {"filter": "unread"}), (COUNT, None)])
def test_list_and_count_take_the_same_queries_at_5_and_200_notifications(client_for, project, ticket, path, params):
    counts = []
    for size in (5, 200):
        user = MembershipFactory(project=project, role=Role.VIEWER).user
        Notification.objects.bulk_create(NotificationFactory.build(user=user, ticket=ticket) for _ in range(size))
        api = client_for(user)
        api.get(COUNT)  # the token's first use is recorded once: leave it out of the count
        counts.append(queries_of(api, path, params))
    assert counts[0] == counts[1] <= 2  # the token, the notifications
