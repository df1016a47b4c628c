"""Inputs that once answered 500: each is a 4xx JSON error now."""

import pytest

from core.api.parsers import MAX_JSON_DEPTH
from tests.factories import TicketFactory

from .test_sockets import TWENTY_DIGITS


@pytest.fixture
def api(client_for, manager):
    return client_for(manager)


@pytest.mark.parametrize("levels", [MAX_JSON_DEPTH + 1, 1_000, 100_000])
def test_deeply_nested_json_is_400(api, project, levels):
    body = '{"name": ' + "[" * levels + "]" * levels + "}"
    response = api.post("/api/v1/projects", data=body, content_type="application/json")
    assert (response.status_code, response.json()) == (400, {
        "code": "bad_request", "error": f"JSON nested more than {MAX_JSON_DEPTH} "
                                                                      "levels deep"})


def test_json_nested_as_deep_as_allowed_reaches_validation(api):
    body = '{"name": ' + "[" * (MAX_JSON_DEPTH - 1) + "]" * (MAX_JSON_DEPTH - 1) + "}"
    response = api.post("/api/v1/projects", data=body, content_type="application/json")
    assert response.status_code == 422


def test_json_body_over_the_limit_is_413(api, settings):
    body = '{"name": "' + "a" * settings.REQUEST_BODY_MAX_SIZE + '"}'
    response = api.post("/api/v1/projects", data=body, content_type="application/json")
    assert (response.status_code, response.json()) == (413, {
        "code": "payload_too_large", "error": "request body too large"})


def test_more_than_a_thousand_query_parameters_is_400(client_for, viewer, project):
    query = "&".join(f"status[]=s{index}" for index in range(1_001))
    response = client_for(viewer).get(f"/api/v1/projects/{project.id}/tickets/search?q=moon&{query}")
    assert (response.status_code, response.json()) == (400, {
        "code": "bad_request", "error": "too many fields or query parameters"})


@pytest.fixture
def ticket(project):
    return TicketFactory(project=project)


NUL_STATUS = "back\x00log"


@pytest.mark.parametrize("request_of", [
    lambda project, ticket: ("get", f"/api/v1/projects/{project.id}/tickets?status={NUL_STATUS}", None),
    lambda project, ticket: ("post", f"/api/v1/projects/{project.id}/tickets/{ticket.number}/move",
                             {"status": NUL_STATUS}),
    lambda project, ticket: ("post", f"/api/v1/projects/{project.id}/tickets/sort",
                             {"status": NUL_STATUS, "ticket_ids": [ticket.id]}),
    lambda project, ticket: ("post", f"/api/v1/projects/{project.id}/tickets", {"title": "x", "status": NUL_STATUS}),
], ids=["list", "move", "sort", "create"])
def test_nul_in_a_status_is_422(api, project, ticket, request_of):
    method, path, body = request_of(project, ticket)
    response = getattr(api, method)(path, body, format="json") if body else api.get(path)
    assert (response.status_code, response.json()) == (422, {
        "code": "validation_failed", "error": "status: must be a status slug",
                                                             "field": "status"})


def test_board_page_of_a_twenty_digit_project_is_404(client, manager):
    client.force_login(manager)
    assert client.get(f"/projects/{TWENTY_DIGITS}/board/").status_code == 404
    assert client.get(f"/projects/{TWENTY_DIGITS}/board/data").status_code == 404
