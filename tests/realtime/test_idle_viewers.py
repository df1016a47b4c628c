"""A viewer whose board stays quiet keeps its socket: the Redis channel layer waits for frames in blocking
reads of 5 s, which the Redis client must not give up on (redis-py 8 did, closing every idle socket)."""

import asyncio
import json
import os

from websockets.asyncio.client import connect

from accounts.services import issue_token
from tests.factories import TicketFactory

from .conftest import SEVERAL_PROCESSES
from .servers import DaphneServer, served_database_url

pytestmark = SEVERAL_PROCESSES

QUIET_SECONDS = 7  # longer than one blocking read of the layer


async def frame_after_a_quiet_while(socket_url: str, token: str, move) -> dict:
    async with connect(socket_url, additional_headers={"Authorization": f"Bearer {token}"}, open_timeout=10) as socket:
        with_nothing = asyncio.wait_for(socket.recv(), timeout=QUIET_SECONDS)
        try:
            unexpected = await with_nothing
        except TimeoutError:
            pass
        else:
            raise AssertionError(f"a frame on a quiet board: {unexpected}")
        await asyncio.to_thread(move)
        return json.loads(await asyncio.wait_for(socket.recv(), timeout=10))


def test_a_viewer_of_a_quiet_board_still_gets_the_next_change(project, manager, viewer):
    ticket = TicketFactory(project=project)
    manager_token, viewer_token = issue_token(user=manager)[1], issue_token(user=viewer)[1]
    env = {"DATABASE_URL": served_database_url(), "REDIS_URL": os.environ["REDIS_URL"]}

    with DaphneServer(env) as server:
        frame = asyncio.run(frame_after_a_quiet_while(
            f"{server.ws_url}/ws/v1/projects/{project.id}/board/", viewer_token,
            lambda: server.post(f"/api/v1/projects/{project.id}/tickets/{ticket.number}/move", {"status": "done"},
                                manager_token)))

    assert (frame["event"], frame["ticket"]["id"], frame["to_status"]) == ("ticket.moved", ticket.id, "done")
