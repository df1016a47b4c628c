"""The web pages: the project list and the live board, for a browser logged in with a session."""

import json
import re

import pytest
from django.test import Client

from projects.roles import Role
from tests.factories import PASSWORD, MembershipFactory, ProjectFactory, TagFactory, TicketFactory


@pytest.fixture
def browser(viewer):
    browser = Client()
    browser.force_login(viewer)
    return browser


def board_page(project) -> str:
    return f"/projects/{project.id}/board/"


def embedded_board(response) -> dict:
    match = re.search(r'<script id="board-data" type="application/json">(.*?)</script>', response.content.decode())
    assert match, "the page embeds the board payload"
    return json.loads(match.group(1))


def test_login_leads_to_the_project_list(client, viewer):
    response = client.post("/accounts/login/", {"username": viewer.username, "password": PASSWORD})
    assert (response.status_code, response["Location"]) == (302, "/projects/")


@pytest.mark.parametrize("path", ["/projects/", "/projects/1/board/"])
def test_anonymous_is_sent_to_login(client, db, path):
    response = client.get(path)
    assert (response.status_code, response["Location"]) == (302, f"/accounts/login/?next={path}")


def test_project_list_shows_the_callers_projects_with_their_boards(browser, project, viewer):
    other = ProjectFactory(name="Zephyr", prefix="ZEP")
    MembershipFactory(project=other, user=viewer, role=Role.MANAGER)
    ProjectFactory(name="Not mine")

    page = browser.get("/projects/").content.decode()

    assert re.findall(r'<span class="project-name">(.*?)</span>', page) == ["Apollo", "Zephyr"]
    assert f'href="{board_page(project)}"' in page and f'href="{board_page(other)}"' in page


def test_board_page_embeds_the_board_of_the_api(browser, client_for, project, viewer):
    TicketFactory(project=project, title="Wire the socket", tags=[TagFactory(project=project)], assignees=[viewer])

    response = browser.get(board_page(project))

    assert response.status_code == 200
    assert embedded_board(response) == client_for(viewer).get(f"/api/v1/projects/{project.id}/board").json()
    page = response.content.decode()
    assert f'data-socket-path="/ws/v1/projects/{project.id}/board/"' in page
    assert f'data-board-url="/api/v1/projects/{project.id}/board"' in page  # what it reloads, with its session
    assert re.findall(r'<section class="column" data-status="(\w+)"', page) == [
        "backlog", "todo", "in_progress", "review", "done"]


def test_board_page_leaves_hidden_columns_out(browser, project):
    project.statuses.filter(slug="review").update(hidden=True)
    page = browser.get(board_page(project)).content.decode()
    assert 'data-status="review"' not in page


def test_non_member_and_missing_project_are_404(client, outsider, project):
    client.force_login(outsider)
    assert client.get(board_page(project)).status_code == 404
    assert client.get(f"/projects/{project.id + 1000}/board/").status_code == 404
