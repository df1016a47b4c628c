"""Django's ASGI handler, with its middleware and views run as one synchronous stack.

Private Django APIs this module relies on (tests/core/test_django_internals.py resolves each of them and
fails loudly when an upgrade moves one):
- `django.core.handlers.base.BaseHandler.load_middleware`, called with `is_async`;
- `django.core.handlers.base.BaseHandler._middleware_chain`, the attribute it sets (an instance attribute:
  the test builds a handler to find it).
"""

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIHandler


class SyncStackASGIHandler(ASGIHandler):
    """Every middleware and view of ours is synchronous. Django's own handler still puts its asynchronous
    response path under them: each request went from the event loop into its thread (the middleware),
    back to the loop (the response path) and into the thread again (the view). Built as Django builds it
    for WSGI, the stack is entered once, in the request's thread, and left once."""

    def load_middleware(self, is_async=False):
        super().load_middleware(is_async=False)
        self._middleware_chain = sync_to_async(self._middleware_chain, thread_sensitive=True)
