"""What an open board websocket receives: the project's frames, as the writes send them, while access lasts."""

import pytest
from channels.db import database_sync_to_async
from django.utils import timezone

from accounts import consumers
from accounts.models import ApiToken
from accounts.services import issue_token, revoke_token
from projects.models import Membership
from tests.factories import ProjectFactory

from .conftest import ASYNC_DB_TESTS, bearer, board_socket, send_to_board, token_of

pytestmark = ASYNC_DB_TESTS

FRAME = {"event": "ticket.archived", "project_id": 0, "ticket": {"id": 1}, "actor": {"id": 2, "name": "Ada"},
         "seq": 7}


CLOSED = {"type": "websocket.close", "code": consumers.ACCESS_LOST}


@pytest.fixture
def access_rechecked_often(monkeypatch):
    monkeypatch.setattr(consumers, "ACCESS_RECHECK_SECONDS", 0.05)


async def test_frame_sent_to_the_board_group_is_relayed_verbatim(project, viewer):
    async with board_socket(project.id, bearer(await token_of(viewer))) as socket:
        await send_to_board(project.id, FRAME)
        assert await socket.receive_json_from() == FRAME


async def test_frames_of_other_projects_are_not_relayed(project, viewer):
    other = await database_sync_to_async(ProjectFactory)()
    async with board_socket(project.id, bearer(await token_of(viewer))) as socket:
        await send_to_board(other.id, FRAME)
        assert await socket.receive_nothing()


async def test_every_viewer_of_the_board_receives_the_frame(project, viewer, editor):
    async with (board_socket(project.id, bearer(await token_of(viewer))) as first,
                board_socket(project.id, bearer(await token_of(editor))) as second):
        await send_to_board(project.id, FRAME)
        assert (await first.receive_json_from(), await second.receive_json_from()) == (FRAME, FRAME)


async def test_viewer_removed_behind_the_services_back_is_closed_by_the_recheck(project, viewer,
                                                                                access_rechecked_often):
    """A removal that sends no message (SQL, the shell): the periodic recheck closes the socket, without
    waiting for a frame to relay."""
    async with board_socket(project.id, bearer(await token_of(viewer))) as socket:
        await send_to_board(project.id, FRAME)
        assert await socket.receive_json_from() == FRAME

        await Membership.objects.filter(project=project, user=viewer).adelete()
        assert await socket.receive_output(timeout=2) == CLOSED
        await send_to_board(project.id, FRAME)
        assert await socket.receive_nothing()


async def test_the_other_viewers_go_on_receiving(project, viewer, editor, access_rechecked_often):
    async with (board_socket(project.id, bearer(await token_of(viewer))) as removed,
                board_socket(project.id, bearer(await token_of(editor))) as staying):
        await Membership.objects.filter(project=project, user=viewer).adelete()
        assert await removed.receive_output(timeout=2) == CLOSED
        await send_to_board(project.id, FRAME)
        assert await staying.receive_json_from() == FRAME


async def test_a_token_revoked_behind_the_services_back_is_closed_by_the_recheck(project, viewer,
                                                                                 access_rechecked_often):
    token, plain = await database_sync_to_async(issue_token)(user=viewer)
    async with board_socket(project.id, bearer(plain)) as socket:
        await ApiToken.objects.filter(pk=token.pk).aupdate(revoked_at=timezone.now())
        assert await socket.receive_output(timeout=2) == CLOSED


async def test_revoking_the_token_ends_the_stream_at_once(project, viewer):
    token, plain = await database_sync_to_async(issue_token)(user=viewer)
    async with board_socket(project.id, bearer(plain)) as socket:
        await database_sync_to_async(revoke_token)(token=token)
        assert await socket.receive_output(timeout=1) == CLOSED


async def test_access_is_reread_at_most_every_few_seconds(project, viewer):
    async with board_socket(project.id, bearer(await token_of(viewer))) as socket:
        await Membership.objects.filter(project=project, user=viewer).adelete()
        await send_to_board(project.id, FRAME)
        # Within ACCESS_RECHECK_SECONDS of the handshake the removal is not seen yet.
        assert await socket.receive_json_from() == FRAME


