"""Two server processes on one PostgreSQL database and one Redis: a viewer that dropped its socket on
one process resumes on the other with exactly the frames it missed, then the live ones."""

import asyncio
import json
import os

from websockets.asyncio.client import connect

from accounts.services import issue_token
from tests.factories import TicketFactory
from tests.realtime.conftest import SEVERAL_PROCESSES
from tests.realtime.servers import DaphneServer, served_database_url

pytestmark = SEVERAL_PROCESSES


async def frames(socket, count: int) -> list[dict]:
    return [json.loads(await asyncio.wait_for(socket.recv(), timeout=10)) for _ in range(count)]


async def quiet(socket) -> bool:
    try:
        await asyncio.wait_for(socket.recv(), timeout=0.5)
    except TimeoutError:
        return True
    return False


def test_a_viewer_resumes_on_the_other_process(project, manager, viewer):
    ticket = TicketFactory(project=project, title="Cross the processes")
    manager_token, viewer_token = issue_token(user=manager)[1], issue_token(user=viewer)[1]
    env = {"DATABASE_URL": served_database_url(), "REDIS_URL": os.environ["REDIS_URL"]}
    headers = {"Authorization": f"Bearer {viewer_token}"}
    path = f"/ws/v1/projects/{project.id}/board/"

    def move(server, status):
        server.post(f"/api/v1/projects/{project.id}/tickets/{ticket.number}/move", {"status": status}, manager_token)

    async def scenario(server_a, server_b):
        async with connect(f"{server_a.ws_url}{path}", additional_headers=headers, open_timeout=10) as socket:
            await asyncio.to_thread(move, server_a, "todo")
            [seen] = await frames(socket, 1)
        # Dropped: three moves happen meanwhile, through either process.
        for server, status in ((server_a, "in_progress"), (server_b, "review"), (server_a, "done")):
            await asyncio.to_thread(move, server, status)
        async with connect(f"{server_b.ws_url}{path}?since={seen['seq']}", additional_headers=headers,
                           open_timeout=10) as socket:
            missed = await frames(socket, 3)
            await asyncio.to_thread(move, server_a, "backlog")
            live = await frames(socket, 1)
            assert await quiet(socket)
        return seen, missed, live

    with DaphneServer(env) as server_a, DaphneServer(env) as server_b:
        seen, missed, live = asyncio.run(scenario(server_a, server_b))

    assert [frame["seq"] for frame in missed + live] == list(range(seen["seq"] + 1, seen["seq"] + 5))
    assert [frame["to_status"] for frame in missed + live] == ["in_progress", "review", "done", "backlog"]
