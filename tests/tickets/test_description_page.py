"""The board page's description fragment: a ticket's Markdown as the panel shows it, rendered and sanitized by
the docs pages' renderer, for the ticket's readers only."""

import pytest
from django.test import Client
from django.utils import timezone

from core.csp import CSP_HEADER
from core.markdown import render_markdown
from tests.factories import ProjectFactory, TicketFactory

PAYLOAD = 'Some **bold** <script>alert(1)</script> [x](javascript:alert(2)) <img src=x onerror="alert(3)">'


def fragment(project, number: int) -> str:
    return f"/projects/{project.id}/board/tickets/{number}/description/"


@pytest.fixture
def browser(viewer):
    browser = Client()
    browser.force_login(viewer)
    return browser


def test_a_member_gets_the_sanitized_rendering(browser, project, django_assert_max_num_queries):
    ticket = TicketFactory(project=project, description=PAYLOAD)
    with django_assert_max_num_queries(4):  # session, user, membership, ticket
        response = browser.get(fragment(project, ticket.number))
    assert (response.status_code, response["Content-Type"]) == (200, "text/html; charset=utf-8")
    html = response.content.decode()
    assert html == render_markdown(PAYLOAD)
    assert "<strong>bold</strong>" in html and "&lt;script&gt;" in html
    assert "<script" not in html and "href=\"javascript" not in html and "<img" not in html
    assert "no-store" in response["Cache-Control"]
    assert CSP_HEADER in response


def test_an_empty_description_is_an_empty_fragment(browser, project):
    ticket = TicketFactory(project=project)
    response = browser.get(fragment(project, ticket.number))
    assert (response.status_code, response.content) == (200, b"")


def test_an_archived_ticket_is_read_like_its_detail(browser, project):
    ticket = TicketFactory(project=project, description="*kept*", archived_at=timezone.now())
    response = browser.get(fragment(project, ticket.number))
    assert (response.status_code, response.content.decode()) == (200, "<p><em>kept</em></p>\n")


def test_a_deleted_ticket_or_another_projects_number_is_404(browser, project):
    deleted = TicketFactory(project=project, description="gone", deleted_at=timezone.now())
    elsewhere = TicketFactory(project=ProjectFactory(), description="not yours")
    assert browser.get(fragment(project, deleted.number)).status_code == 404
    assert browser.get(fragment(project, elsewhere.number + 100)).status_code == 404
    assert browser.get(fragment(elsewhere.project, elsewhere.number)).status_code == 404


def test_a_non_member_gets_404_and_a_stranger_the_login_page(client, outsider, project):
    ticket = TicketFactory(project=project, description="secret")
    path = fragment(project, ticket.number)
    assert (client.get(path).status_code, client.get(path)["Location"]) == (302, f"/accounts/login/?next={path}")
    client.force_login(outsider)
    assert client.get(path).status_code == 404


def test_only_get(browser, project):
    ticket = TicketFactory(project=project)
    assert browser.post(fragment(project, ticket.number)).status_code == 405
