"""The header badge of the web pages, and the admin's notification list."""

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from notifications.models import Notification
from projects.roles import Role
from tests.factories import MembershipFactory, NotificationFactory, UserFactory


@pytest.fixture
def ada(project):
    return MembershipFactory(project=project, role=Role.VIEWER, user=UserFactory(username="ada")).user


@pytest.fixture
def browser_of():
    def make(user) -> Client:
        browser = Client()
        browser.force_login(user)
        return browser

    return make


def test_the_header_shows_the_unread_count_and_loads_the_badge_script(browser_of, ada, ticket,
                                                                      django_assert_max_num_queries):
    NotificationFactory.create_batch(3, user=ada, ticket=ticket)
    NotificationFactory(user=ada, ticket=ticket, read_at=timezone.now())
    browser = browser_of(ada)
    with django_assert_max_num_queries(20):
        page = browser.get("/projects/").content.decode()
    assert '<span class="badge" data-unread-count>3</span>' in page
    assert 'data-socket-path="/ws/v1/notifications/"' in page
    assert "js/notifications.js" in page


def notification_queries_of_a_page(browser) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert browser.get("/projects/").status_code == 200
    return sum(Notification._meta.db_table in query["sql"] for query in captured.captured_queries)


def test_the_badge_costs_one_query_whatever_the_count(browser_of, ada, ticket):
    browser = browser_of(ada)
    assert notification_queries_of_a_page(browser) == 1
    NotificationFactory.create_batch(30, user=ada, ticket=ticket)
    assert notification_queries_of_a_page(browser) == 1


def test_no_badge_when_logged_out(client):
    page = client.get("/accounts/login/").content.decode()
    assert "data-notification-badge" not in page and "notifications.js" not in page


def test_the_badge_reads_the_count_from_the_api(browser_of, ada, ticket):
    NotificationFactory.create_batch(2, user=ada, ticket=ticket)
    browser = browser_of(ada)
    assert 'data-count-url="/api/v1/notifications/unread-count"' in browser.get("/projects/").content.decode()
    response = browser.get("/api/v1/notifications/unread-count")
    assert (response.status_code, response.json()) == (200, {"count": 2})


def test_admin_searches_by_user_and_filters_by_read_state_and_type(staff, ada, manager, ticket):
    unread = NotificationFactory(user=ada, ticket=ticket)
    read = NotificationFactory(user=ada, ticket=ticket, read_at=timezone.now(), type="mention")
    NotificationFactory(user=manager, ticket=ticket)

    def listed(**params) -> set[int]:
        response = staff.get("/admin/notifications/notification/", params)
        assert response.status_code == 200
        return {row.pk for row in response.context["cl"].result_list}

    assert listed(q="ada") == {unread.pk, read.pk}
    assert listed(q="mention") == {read.pk}
    assert listed(read="no") == set(Notification.objects.filter(read_at__isnull=True).values_list("pk", flat=True))
    assert listed(read="yes") == {read.pk}
    assert listed(type__exact="mention") == {read.pk}

