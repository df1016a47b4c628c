"""The resumable board socket: `?since=SEQ` replays the kept frames after SEQ, then goes on live,
with no gap and no duplicate where the two meet."""

import asyncio
import contextlib
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.utils import timezone

from config.application import application
from events import replay
from events.models import ProjectEvent
from events.services import prune_events
from tests.realtime.conftest import ASYNC_DB_TESTS, bearer, board_path, token_of

from .conftest import write_events

pytestmark = ASYNC_DB_TESTS

write = database_sync_to_async(write_events)


@contextlib.asynccontextmanager
async def board_since(project_id: int, headers, since):
    communicator = WebsocketCommunicator(application, f"{board_path(project_id)}?since={since}", headers=headers)
    connected, _ = await communicator.connect()
    try:
        yield communicator if connected else None
    finally:
        await communicator.disconnect()


async def seqs_until_quiet(socket) -> list[int]:
    received = []
    while not await socket.receive_nothing(timeout=0.3):
        received.append((await socket.receive_json_from())["seq"])
    return received


async def test_replays_exactly_the_missing_frames_then_live_ones(project, manager, viewer):
    await write(project, manager, 5)
    kept = await database_sync_to_async(lambda: list(ProjectEvent.objects.order_by("seq")
                                                     .values_list("payload", flat=True)))()
    async with board_since(project.id, bearer(await token_of(viewer)), 2) as socket:
        assert [await socket.receive_json_from() for _ in range(3)] == kept[2:]  # 3, 4, 5 as they were sent
        assert await socket.receive_nothing()
        await write(project, manager, 2)
        assert [(await socket.receive_json_from())["seq"] for _ in range(2)] == [6, 7]
        assert await socket.receive_nothing()


async def test_up_to_date_resumes_live_only(project, manager, viewer):
    await write(project, manager, 3)
    async with board_since(project.id, bearer(await token_of(viewer)), 3) as socket:
        assert await socket.receive_nothing()
        await write(project, manager, 1)
        assert (await socket.receive_json_from())["seq"] == 4


async def test_writes_during_the_replay_leave_no_gap_and_no_duplicate(project, manager, viewer):
    await write(project, manager, 10)
    token = await token_of(viewer)
    total, done = 60, []

    async def keep_writing():
        for _ in range(total):
            await write(project, manager, 1)  # each commits, then is sent to the group, in the database thread
            done.append(1)
            await asyncio.sleep(0)

    writer = asyncio.create_task(keep_writing())
    await asyncio.sleep(0)
    async with board_since(project.id, bearer(token), 4) as socket:
        during_connect = len(done)
        await writer
        received = await seqs_until_quiet(socket)
    # The handshake and the replay ran while writes were being committed and sent: both sides of the seam.
    assert 0 < during_connect < total
    assert received == list(range(5, 10 + total + 1))


async def test_pruned_frames_answer_resync_required_then_live(project, manager, viewer):
    await write(project, manager, 5)
    await database_sync_to_async(
        lambda: ProjectEvent.objects.filter(seq__lte=3).update(created_at=timezone.now() - timedelta(days=30)))()
    assert await database_sync_to_async(prune_events)() == 3
    token = await token_of(viewer)

    async with board_since(project.id, bearer(token), 1) as socket:
        assert await socket.receive_json_from() == {"event": "resync_required", "project_id": project.id, "seq": 5}
        assert await socket.receive_nothing()
        await write(project, manager, 1)
        assert (await socket.receive_json_from())["seq"] == 6
    async with board_since(project.id, bearer(token), 3) as socket:  # 4 onwards are still kept
        assert await seqs_until_quiet(socket) == [4, 5, 6]


async def test_a_seq_ahead_of_the_project_or_too_far_behind_answers_resync(project, manager, viewer, monkeypatch):
    await write(project, manager, 4)
    token = await token_of(viewer)
    async with board_since(project.id, bearer(token), 9) as socket:
        assert (await socket.receive_json_from())["event"] == "resync_required"
    monkeypatch.setattr(replay, "REPLAY_MAX", 2)
    async with board_since(project.id, bearer(token), 1) as socket:
        assert await socket.receive_json_from() == {"event": "resync_required", "project_id": project.id, "seq": 4}
        assert await socket.receive_nothing()
    async with board_since(project.id, bearer(token), 2) as socket:
        assert await seqs_until_quiet(socket) == [3, 4]


@pytest.mark.parametrize("since", ["", "abc", "-1", "1.5", "1&since=2", "٣", "9" * 19, "1" * 5000, "+1", " 1"])
async def test_a_malformed_since_refuses_the_handshake(project, viewer, since):
    async with board_since(project.id, bearer(await token_of(viewer)), since) as socket:
        assert socket is None


async def test_a_non_member_is_refused_even_with_since(project, outsider):
    async with board_since(project.id, bearer(await token_of(outsider)), 0) as socket:
        assert socket is None


async def test_a_live_frame_lost_on_the_way_is_filled_in_from_the_log(project, manager, viewer, monkeypatch):
    from core import live
    real = live.send_after_commit
    async with board_since(project.id, bearer(await token_of(viewer)), 0) as socket:
        monkeypatch.setattr(live, "send_after_commit", lambda messages: None)  # seq 1 never reaches the group
        await write(project, manager, 1)
        monkeypatch.setattr(live, "send_after_commit", real)
        await write(project, manager, 1)
        assert await seqs_until_quiet(socket) == [1, 2]


async def test_a_lost_frame_no_longer_kept_answers_resync(project, manager, viewer, monkeypatch):
    from core import live
    real = live.send_after_commit
    async with board_since(project.id, bearer(await token_of(viewer)), 0) as socket:
        monkeypatch.setattr(live, "send_after_commit", lambda messages: None)
        await write(project, manager, 2)
        await database_sync_to_async(lambda: ProjectEvent.objects.filter(seq=1).delete())()
        monkeypatch.setattr(live, "send_after_commit", real)
        await write(project, manager, 1)
        assert await socket.receive_json_from() == {"event": "resync_required", "project_id": project.id, "seq": 3}
        assert await socket.receive_nothing()
        await write(project, manager, 1)
        assert (await socket.receive_json_from())["seq"] == 4
