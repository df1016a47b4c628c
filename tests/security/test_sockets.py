"""Board socket paths that reach nothing are refused like any other refused handshake, never a traceback."""

from channels.testing import WebsocketCommunicator

from config.application import application
from tests.realtime.conftest import ASYNC_DB_TESTS, async_db_connections, bearer, is_accepted, token_of  # noqa: F401

pytestmark = ASYNC_DB_TESTS

TWENTY_DIGITS = "1" * 20


async def test_board_socket_of_a_twenty_digit_project_is_refused(manager):
    assert not await is_accepted(TWENTY_DIGITS, bearer(await token_of(manager)))


async def test_socket_on_an_unknown_path_is_refused(manager):
    communicator = WebsocketCommunicator(application, "/ws/v1/nothing/", headers=bearer(await token_of(manager)))
    connected, _ = await communicator.connect()
    assert not connected


async def test_board_socket_of_a_project_still_opens(project, manager):
    assert await is_accepted(project.id, bearer(await token_of(manager)))
