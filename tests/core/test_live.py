"""Messages a write sends after commit (core.live): a server's request hands them to the loop that serves it
and goes on, where async_to_sync held its thread until the channel layer had sent them."""

import asyncio

import pytest
from channels.layers import get_channel_layer

from core import live


@pytest.mark.asyncio
async def test_a_request_thread_hands_its_messages_to_the_serving_loop_without_waiting(monkeypatch):
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add("live-test", channel)
    released, group_send = asyncio.Event(), layer.group_send

    async def held_until_released(group, message):
        await released.wait()  # on the serving loop: an event of its own
        await group_send(group, message)

    monkeypatch.setattr(layer, "group_send", held_until_released)
    loop = asyncio.get_running_loop()

    def in_the_request_thread():
        live.serving_loop.set(loop)  # as live.ServingLoop sets it for a request
        live.send([("live-test", {"type": "frames", "n": 1})])

    await asyncio.wait_for(asyncio.to_thread(in_the_request_thread), timeout=5)  # returned before the send
    released.set()
    assert await asyncio.wait_for(layer.receive(channel), timeout=5) == {"type": "frames", "n": 1}
    await layer.group_discard("live-test", channel)


@pytest.mark.asyncio
async def test_the_serving_loop_is_the_request_s():
    seen = []

    async def app(scope, receive, send):
        seen.append(live.serving_loop.get(None))

    await live.ServingLoop(app)({"type": "http"}, None, None)
    assert seen == [asyncio.get_running_loop()]
