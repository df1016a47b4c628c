"""End to end: a write through the REST API reaches an open board websocket once it has committed."""

from types import SimpleNamespace

import pytest
from channels.db import database_sync_to_async
from django.db import transaction
from django.utils import timezone

from tests.factories import TicketFactory
from tests.tickets.conftest import status_of, ticket_url
from tickets import services

from .conftest import ASYNC_DB_TESTS, bearer, board_socket, token_of

pytestmark = ASYNC_DB_TESTS


@pytest.fixture
def api(client_for, manager):
    return client_for(manager)


@pytest.fixture
def first(project, manager):
    return TicketFactory(project=project, title="First")


@pytest.fixture
def board(project, first):
    """What the writes below act on: two tickets in the first column and one archived."""
    return SimpleNamespace(project=project, first=first, second=TicketFactory(project=project, title="Second"),
                           archived=TicketFactory(project=project, title="Shelved", archived_at=timezone.now()))


def post(api, path: str, body: dict | None = None):
    return database_sync_to_async(api.post)(path, body, format="json")


WRITES = {  # what is written: the event its frame announces, the request
    "create": ("ticket.created", lambda board: (f"/api/v1/projects/{board.project.id}/tickets", {"title": "New"})),
    "update": ("ticket.updated", lambda board: (ticket_url(board.first, "update"), {"title": "Renamed"})),
    "move": ("ticket.moved", lambda board: (ticket_url(board.first, "move"), {"status": "done"})),
    "archive": ("ticket.archived", lambda board: (ticket_url(board.first, "archive"), None)),
    "unarchive": ("ticket.unarchived", lambda board: (ticket_url(board.archived, "unarchive"), None)),
    "delete": ("ticket.deleted", lambda board: (ticket_url(board.first, "delete"), None)),
    "sort": ("column.sorted", lambda board: (f"/api/v1/projects/{board.project.id}/tickets/sort",
                                             {"status": "backlog", "ticket_ids": [board.second.id, board.first.id]})),
    # The card's counters change:
    # (followed by the event of what was written, kept in the project's event log)
    "comment": (("ticket.updated", "comment.created"), lambda board: (ticket_url(board.first, "comments"), {"comment": "Seen it"})),
    "checklist item": (("ticket.updated", "checklist.changed"),
                       lambda board: (f"/api/v1/tickets/{board.first.id}/checklist", {"text": "Step"})),
}


@pytest.mark.parametrize("write", WRITES)
async def test_every_board_write_reaches_the_viewer(write, api, board, project, manager, viewer):
    events, request = WRITES[write]
    events = (events,) if isinstance(events, str) else events
    async with board_socket(project.id, bearer(await token_of(viewer))) as socket:
        response = await post(api, *request(board))
        assert response.status_code in (200, 201)

        for event in events:
            frame = await socket.receive_json_from()
            assert (frame["event"], frame["project_id"], frame["actor"]) == (
                event, project.id, {"id": manager.id, "name": manager.display_name})
        assert await socket.receive_nothing()


async def test_moved_frame_carries_the_board_ticket_and_consecutive_seq(api, project, viewer, first):
    async with board_socket(project.id, bearer(await token_of(viewer))) as socket:
        await post(api, ticket_url(first, "move"), {"status": "todo"})
        await post(api, ticket_url(first, "move"), {"status": "done"})
        moves = [await socket.receive_json_from(), await socket.receive_json_from()]

    payload = (await database_sync_to_async(api.get)(f"/api/v1/projects/{project.id}/board")).json()
    done = next(column for column in payload["columns"] if column["status"] == "done")
    assert [(frame["from_status"], frame["to_status"]) for frame in moves] == [("backlog", "todo"), ("todo", "done")]
    assert moves[1]["ticket"] == done["tickets"][0]
    assert moves[1]["seq"] == moves[0]["seq"] + 1


async def test_refused_write_sends_nothing(client_for, project, viewer, first):
    viewer_api = await database_sync_to_async(client_for)(viewer)
    async with board_socket(project.id, bearer(await token_of(viewer))) as socket:
        response = await post(viewer_api, ticket_url(first, "move"), {"status": "done"})
        assert response.status_code == 403
        assert await socket.receive_nothing()


async def test_rolled_back_write_sends_nothing(project, manager, viewer, first):
    @database_sync_to_async
    def move_then_fail():
        with pytest.raises(RuntimeError), transaction.atomic():
            services.move_ticket(ticket=first, status=status_of(project, "done"), actor=manager)
            raise RuntimeError("a later step of the same transaction fails")

    async with board_socket(project.id, bearer(await token_of(viewer))) as socket:
        await move_then_fail()
        assert await socket.receive_nothing()
