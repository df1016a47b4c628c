"""The board page's writes, made as the page makes them (the browser's session and its CSRF token), meet the
role table exactly as a token's do: whatever a page shows, a viewer changes nothing on the board."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from projects.roles import Role
from tests.factories import TicketFactory
from tests.sample_files import png
from tickets.models import Ticket


def page_session(user) -> Client:
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(user)
    browser.get("/projects/")  # a page sets the CSRF cookie
    browser.defaults["HTTP_X_CSRFTOKEN"] = browser.cookies["csrftoken"].value
    return browser


@pytest.fixture
def column(project):
    """Two tickets in the first column, one with a checklist item; their state as (id, title, status, order)."""
    first = TicketFactory(project=project, title="Alpha")
    TicketFactory(project=project, title="Bravo")
    first.checklist_items.create(text="One", sort_order=0)
    return first


def board_state(project) -> list[tuple]:
    return list(Ticket.objects.filter(project=project).order_by("sort_order", "id").values_list(
        "id", "title", "status__slug", "priority", "checklist_items__done").distinct())


def send(browser, path: str, body: dict | None):
    """As the page sends it: JSON, or no body at all."""
    if body is None:
        return browser.generic("POST", path)
    return browser.post(path, body, content_type="application/json")


def writes(project, ticket) -> dict[str, tuple[str, dict]]:
    """The writes the board page offers an editor, as it sends them."""
    base = f"/api/v1/projects/{project.id}/tickets"
    ids = list(Ticket.objects.filter(project=project).order_by("-sort_order").values_list("id", flat=True))
    return {
        "create": (base, {"title": "New", "status": "todo"}),
        "move": (f"{base}/{ticket.number}/move", {"status": "done"}),
        "update": (f"{base}/{ticket.number}/update", {"title": "Renamed", "priority": "high"}),
        "assign": (f"{base}/{ticket.number}/assign", {"user_id": ticket.created_by_id}),
        "checklist add": (f"/api/v1/tickets/{ticket.pk}/checklist", {"text": "Two"}),
        "checklist toggle": (f"/api/v1/checklist/{ticket.checklist_items.get().pk}/toggle", None),
        "sort": (f"{base}/sort", {"status": "backlog", "ticket_ids": ids}),
    }


@pytest.mark.parametrize("action", ["create", "move", "update", "assign", "checklist add", "checklist toggle", "sort"])
def test_a_viewers_page_writes_are_refused_and_change_nothing(member_with, project, column, action):
    browser = page_session(member_with(Role.VIEWER))
    before = board_state(project)
    path, body = writes(project, column)[action]

    response = send(browser, path, body)

    assert (response.status_code, response.json()) == (403, {
        "code": "forbidden", "error": "your role in this project does not allow this"})
    assert board_state(project) == before
    assert not Ticket.objects.get(pk=column.pk).assignees.exists()


def test_a_viewers_upload_is_refused(member_with, project, column):
    browser = page_session(member_with(Role.VIEWER))
    response = browser.post(f"/api/v1/tickets/{column.pk}/attachments",
                            {"files[]": [SimpleUploadedFile("dot.png", png(), "image/png")]})
    assert response.status_code == 403
    assert not column.attachments.exists()


def test_what_every_member_may_do_a_viewers_page_does(member_with, project, column):
    browser = page_session(member_with(Role.VIEWER))
    comment = browser.post(f"/api/v1/projects/{project.id}/tickets/{column.number}/comments", {"comment": "Seen"},
                           content_type="application/json")
    timer = send(browser, f"/api/v1/tickets/{column.pk}/time-entries/start", None)
    assert (comment.status_code, timer.status_code) == (201, 200)


def test_a_contributors_page_reorders_a_column_but_moves_nothing_out(member_with, project, column):
    browser = page_session(member_with(Role.CONTRIBUTOR))
    assert send(browser, *writes(project, column)["sort"]).status_code == 200
    reordered = board_state(project)
    assert send(browser, *writes(project, column)["move"]).status_code == 403
    assert board_state(project) == reordered
