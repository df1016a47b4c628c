"""Two server processes on one PostgreSQL database and one Redis: a move made through one of them
reaches a board viewer connected to the other."""

import asyncio
import json
import os

from websockets.asyncio.client import connect

from accounts.services import issue_token
from tests.factories import TicketFactory

from .conftest import TWO_PROCESS_TESTS
from .servers import DaphneServer, served_database_url

pytestmark = TWO_PROCESS_TESTS


async def watch_move(viewer_socket_url: str, viewer_token: str, move) -> dict:
    async with connect(viewer_socket_url, additional_headers={"Authorization": f"Bearer {viewer_token}"},
                       open_timeout=10) as socket:
        await asyncio.to_thread(move)
        return json.loads(await asyncio.wait_for(socket.recv(), timeout=10))


def test_move_through_one_process_reaches_a_viewer_of_the_other(project, manager, viewer):
    ticket = TicketFactory(project=project, title="Cross the processes")
    manager_token, viewer_token = issue_token(user=manager)[1], issue_token(user=viewer)[1]
    env = {"DATABASE_URL": served_database_url(), "REDIS_URL": os.environ["REDIS_URL"]}

    with DaphneServer(env) as server_a, DaphneServer(env) as server_b:
        frame = asyncio.run(watch_move(
            f"{server_b.ws_url}/ws/v1/projects/{project.id}/board/", viewer_token,
            lambda: server_a.post(f"/api/v1/projects/{project.id}/tickets/{ticket.number}/move",
                                  {"status": "done"}, manager_token),
        ))

    assert (frame["event"], frame["project_id"], frame["from_status"], frame["to_status"]) == (
        "ticket.moved", project.id, "backlog", "done")
    assert (frame["ticket"]["id"], frame["ticket"]["status"]) == (ticket.id, "done")
