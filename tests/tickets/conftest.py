import pytest

from tests.conftest import GroupListener
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


class BoardListener(GroupListener):
    """A board viewer's channel: the frames of the messages the project's board group received."""

    def frames(self) -> list[dict]:
        return [frame for message in self.messages() for frame in message["frames"]]

    def card_frames(self) -> list[dict]:
        """The frames that change what a card shows; the others (comment.*, checklist.*, …) feed the event log."""
        return [frame for frame in self.frames() if frame["event"].startswith(("ticket.", "column."))]

    def events(self) -> list[str]:
        return [frame["event"] for frame in self.frames()]


@pytest.fixture
def board_listener(project):
    listener = BoardListener(board_group(project.id))
    yield listener
    listener.close()
