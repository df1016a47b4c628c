import asyncio

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from tests.factories import TicketFactory
from tickets.broadcast import board_group


@pytest.fixture
def ticket(project, manager):
    return TicketFactory(project=project, created_by=manager, title="Fix login")


def status_of(project, slug):
    return project.statuses.get(slug=slug)


def ticket_url(ticket, action: str = "") -> str:
    base = f"/api/v1/projects/{ticket.project_id}/tickets/{ticket.number}"
    return f"{base}/{action}" if action else base


class BoardListener:
    """A channel in the project's board group, as a websocket viewer's consumer would be."""

    def __init__(self, project_id: int):
        self.layer = get_channel_layer()
        self.group = board_group(project_id)
        self.channel = async_to_sync(self.layer.new_channel)()
        async_to_sync(self.layer.group_add)(self.group, self.channel)

    def frames(self) -> list[dict]:
        async def drain():
            received = []
            while True:
                try:
                    message = await asyncio.wait_for(self.layer.receive(self.channel), timeout=0.2)
                except asyncio.TimeoutError:
                    return received
                received.append(message["frame"])

        return async_to_sync(drain)()

    def events(self) -> list[str]:
        return [frame["event"] for frame in self.frames()]

    def close(self):
        async_to_sync(self.layer.group_discard)(self.group, self.channel)


@pytest.fixture
def board_listener(project):
    listener = BoardListener(project.id)
    yield listener
    listener.close()
