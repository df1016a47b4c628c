"""Open websockets and the frames they relay, as /metrics reports them (core/metrics.py), by kind."""

from prometheus_client import REGISTRY

from .conftest import ASYNC_DB_TESTS, bearer, board_socket, notification_socket, send_to_board, token_of
from .test_frames import FRAME

pytestmark = ASYNC_DB_TESTS


def sample(name: str, kind: str) -> float:
    return REGISTRY.get_sample_value(name, {"kind": kind}) or 0.0


async def test_open_sockets_and_the_frames_sent_on_them_are_counted_by_kind(project, viewer):
    plain = await token_of(viewer)
    boards, streams = sample("tracker_websocket_connections", "board"), sample("tracker_websocket_connections",
                                                                                 "notifications")
    frames = sample("tracker_broadcast_frames_total", "board")
    async with board_socket(project.id, bearer(plain)) as first, board_socket(project.id, bearer(plain)) as second:
        async with notification_socket(bearer(plain)):
            assert sample("tracker_websocket_connections", "board") == boards + 2
            assert sample("tracker_websocket_connections", "notifications") == streams + 1
            await send_to_board(project.id, FRAME)
            assert [await first.receive_json_from(), await second.receive_json_from()] == [FRAME, FRAME]
            assert sample("tracker_broadcast_frames_total", "board") == frames + 2
        assert sample("tracker_websocket_connections", "notifications") == streams
    assert sample("tracker_websocket_connections", "board") == boards


async def test_a_refused_handshake_is_not_counted(project, outsider):
    boards = sample("tracker_websocket_connections", "board")
    async with board_socket(project.id, bearer(await token_of(outsider))) as refused:
        assert refused is None
        assert sample("tracker_websocket_connections", "board") == boards
