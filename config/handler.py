"""Django's ASGI handler, with its middleware and views run as one synchronous stack, in threads kept from
one request to the next.

Private Django APIs this module relies on (tests/core/test_django_internals.py resolves each of them and
fails loudly when an upgrade moves one):
- `django.core.handlers.base.BaseHandler.load_middleware`, called with `is_async`;
- `django.core.handlers.base.BaseHandler._middleware_chain`, the attribute it sets (an instance attribute:
  the test builds a handler to find it).
"""

from concurrent.futures import ThreadPoolExecutor

from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.core.handlers.asgi import ASGIHandler
from django.db import connections

IDLE_THREADS_KEPT = 32


class RequestThreads:
    """Single-thread executors for requests, each lent to one request at a time and kept for the next.

    Django's handler gives every request a thread-sensitive context of its own, and asgiref starts a thread
    for it and joins it at the end: about a sixth of a trivial request's CPU (py-spy in a server worker),
    with the event loop waiting for each new thread to start.
    A request that ended (answered, failed, or its client gone: asgiref awaits every call into the thread to
    its end) gives its executor back, idle; at most IDLE_THREADS_KEPT are kept. An executor not kept (one too
    many, or a request's cancelled while its thread may still be running: the server stopping) is stopped once
    its work is done, closing the thread's database connections first: for a cancelled request Django's
    request_finished, which would have, never comes.
    """

    def __init__(self, idle_kept: int = IDLE_THREADS_KEPT):
        self.idle_kept = idle_kept
        self.idle: list[ThreadPoolExecutor] = []  # pop() and append() are atomic: loops in several threads

    def lend(self) -> ThreadPoolExecutor:
        try:
            return self.idle.pop()
        except IndexError:
            return ThreadPoolExecutor(max_workers=1, thread_name_prefix="request")

    def give_back(self, executor: ThreadPoolExecutor, *, ended: bool) -> None:
        if ended and len(self.idle) < self.idle_kept:
            self.idle.append(executor)
            return
        executor.submit(connections.close_all)
        executor.shutdown(wait=False)

    def stop_idle(self) -> None:
        """Stop the idle threads, and with them what they hold (a persistent connection to SQLite)."""
        while self.idle:
            self.idle.pop().shutdown(wait=True)


class SyncStackASGIHandler(ASGIHandler):
    """Every middleware and view of ours is synchronous. Django's own handler still puts its asynchronous
    response path under them: each request went from the event loop into its thread (the middleware),
    back to the loop (the response path) and into the thread again (the view). Built as Django builds it
    for WSGI, the stack is entered once, in the request's thread, and left once. The thread is one of
    RequestThreads, lent for the request."""

    def __init__(self):
        super().__init__()
        self.threads = RequestThreads()

    def load_middleware(self, is_async=False):
        super().load_middleware(is_async=False)
        self._middleware_chain = sync_to_async(self._middleware_chain, thread_sensitive=True)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        executor, ended = self.threads.lend(), False
        try:
            async with ThreadSensitiveContext(executor=executor):
                await self.handle(scope, receive, send)
            ended = True
        finally:
            self.threads.give_back(executor, ended=ended)
