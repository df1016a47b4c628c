"""Sending to websocket groups through the channel layer (Redis between processes), after commit only."""

import asyncio
import contextvars
import logging

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

logger = logging.getLogger(__name__)

# The event loop serving the current request, seen from the request's thread (its context is a copy of the
# loop's: asgiref's sync_to_async); unset outside a server (commands, workers, the test client).
serving_loop: contextvars.ContextVar[asyncio.AbstractEventLoop] = contextvars.ContextVar("serving_loop")


class ServingLoop:
    """ASGI middleware: tells a request's code which loop serves it (serving_loop), so that what it sends after
    commit is handed to that loop rather than waited for (async_to_sync would block the request's thread until
    the channel layer has sent it: 6% of a ticket creation's time)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        serving_loop.set(asyncio.get_running_loop())
        return await self.app(scope, receive, send)


def send_after_commit(messages: list[tuple[str, dict]]) -> None:
    """Send each (group, message) once the current transaction commits; nothing if it rolls back.

    The messages are built by the caller inside the transaction: nothing is read again after commit.
    robust=True: a channel layer that is down is logged, and never turns the committed write into an error.
    """
    if messages:
        # A function, not a partial: Django names the callback (__qualname__) when it logs its failure.
        transaction.on_commit(lambda: send(messages), robust=True)


def send(messages: list[tuple[str, dict]]) -> None:
    """In a server's request, handed to its loop to send in order; elsewhere sent before returning."""
    layer = get_channel_layer()

    async def send_all():
        for group, message in messages:
            await layer.group_send(group, message)

    loop = serving_loop.get(None)
    if loop is None:
        async_to_sync(send_all)()
        return
    asyncio.run_coroutine_threadsafe(send_all(), loop).add_done_callback(_log_failure)


def _log_failure(sent) -> None:
    if not sent.cancelled() and sent.exception() is not None:
        logger.error("a live message could not be sent", exc_info=sent.exception())
