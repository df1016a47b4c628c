"""The board and notification sockets are read-only for clients: a frame they cannot use closes the
socket with a 4xxx code and one warning, never a 1011 with a traceback per frame."""

import json
import logging

import pytest

from accounts.consumers import BAD_FRAME, FRAME_TOO_BIG

from .conftest import ASYNC_DB_TESTS, bearer, board_path, open_socket, send_to_board, token_of

pytestmark = ASYNC_DB_TESTS

LIMIT = 4096
FRAME = {"event": "ticket.archived", "project_id": 0, "ticket": {"id": 1}, "actor": {"id": 2, "name": "Ada"},
         "seq": 7}


def padded(size: int) -> str:
    """A JSON object of exactly `size` bytes."""
    empty = json.dumps({"pad": ""})
    return json.dumps({"pad": "x" * (size - len(empty))})


BAD_FRAMES = {
    "invalid JSON": ({"text_data": '{"type": "ping"'}, BAD_FRAME),
    "binary": ({"bytes_data": b"\x00\x01binary"}, BAD_FRAME),
    "huge": ({"text_data": padded(1024 * 1024)}, FRAME_TOO_BIG),
    "one byte over": ({"text_data": padded(LIMIT + 1)}, FRAME_TOO_BIG),
    "few characters, many bytes": ({"text_data": json.dumps({"pad": "€" * 1400}, ensure_ascii=False)}, FRAME_TOO_BIG),
    # 2,000 characters of valid JSON the parser cannot descend into (it stops at Python's recursion limit).
    "nested a thousand deep": ({"text_data": "[" * 1000 + "]" * 1000}, BAD_FRAME),
    "nested two thousand deep": ({"text_data": "[" * 2000 + "]" * 2000}, BAD_FRAME),
}


@pytest.fixture(autouse=True)
def frame_limit(settings):
    settings.WEBSOCKET_MAX_FRAME_BYTES = LIMIT


@pytest.fixture(params=["board", "notifications"])
def socket_path(request, project):
    return board_path(project.id) if request.param == "board" else "/ws/v1/notifications/"


def warnings_logged(caplog) -> list[logging.LogRecord]:
    return [record for record in caplog.records if record.levelno >= logging.WARNING]


@pytest.mark.parametrize("kind", BAD_FRAMES)
async def test_a_bad_frame_closes_the_socket_with_one_warning(socket_path, viewer, kind, caplog):
    frame, code = BAD_FRAMES[kind]
    async with open_socket(socket_path, bearer(await token_of(viewer))) as socket:
        await socket.send_to(**frame)
        await socket.send_to(**frame)  # already in flight when the close reaches the client: not logged again
        assert await socket.receive_output(timeout=1) == {"type": "websocket.close", "code": code}
        assert await socket.receive_nothing()

    [record] = warnings_logged(caplog)
    assert record.name == "accounts.consumers" and record.exc_info is None
    assert str(code) in record.getMessage() and socket_path in record.getMessage()


async def test_valid_json_up_to_the_limit_is_ignored(project, viewer, caplog):
    async with open_socket(board_path(project.id), bearer(await token_of(viewer))) as socket:
        await socket.send_json_to({"type": "ping"})
        await socket.send_to(text_data=padded(LIMIT))
        assert await socket.receive_nothing()

        await send_to_board(project.id, FRAME)
        assert await socket.receive_json_from() == FRAME
    assert warnings_logged(caplog) == []


async def test_the_limit_is_a_setting(project, viewer, settings):
    settings.WEBSOCKET_MAX_FRAME_BYTES = 100
    async with open_socket(board_path(project.id), bearer(await token_of(viewer))) as socket:
        await socket.send_to(text_data=padded(101))
        assert await socket.receive_output(timeout=1) == {"type": "websocket.close", "code": FRAME_TOO_BIG}


async def test_no_frame_is_relayed_after_the_close(project, viewer):
    async with open_socket(board_path(project.id), bearer(await token_of(viewer))) as socket:
        await socket.send_to(bytes_data=b"\x00")
        assert await socket.receive_output(timeout=1) == {"type": "websocket.close", "code": BAD_FRAME}
        await send_to_board(project.id, FRAME)
        assert await socket.receive_nothing()
