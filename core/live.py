"""Sending to websocket groups through the channel layer (Redis between processes), after commit only."""

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction


def send_after_commit(messages: list[tuple[str, dict]]) -> None:
    """Send each (group, message) once the current transaction commits; nothing if it rolls back.

    The messages are built by the caller inside the transaction: nothing is read again after commit.
    robust=True: a channel layer that is down is logged, and never turns the committed write into an error.
    """
    if messages:
        # A function, not a partial: Django names the callback (__qualname__) when it logs its failure.
        transaction.on_commit(lambda: send(messages), robust=True)


def send(messages: list[tuple[str, dict]]) -> None:
    layer = get_channel_layer()

    async def send_all():
        for group, message in messages:
            await layer.group_send(group, message)

    async_to_sync(send_all)()
