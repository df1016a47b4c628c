"""The base of every API view."""

from contextlib import ExitStack

from django.db import transaction
from rest_framework import exceptions
from rest_framework.viewsets import ViewSet

from core import idempotency


class ApiViewSet(ViewSet):
    # The id of this request's claim on its Idempotency-Key, whose answer is kept for retries.
    idempotency_claim: int | None = None
    # What closes the request's write transaction, once it opened one (open_write_transaction).
    write_scope: ExitStack | None = None
    in_write_transaction = False

    def dispatch(self, request, *args, **kwargs):
        # The answer is kept for an Idempotency-Key once the write transaction has ended (committed, or rolled
        # back by an error answer): kept inside it, it would go with a rollback.
        with ExitStack() as self.write_scope:
            response = super().dispatch(request, *args, **kwargs)
        if self.idempotency_claim is not None:
            idempotency.keep(self.idempotency_claim, response)
        return response

    def initial(self, request, *args, **kwargs):
        # DRF's initial(), with the throttle (accounts/ratelimit.py) right after authentication, before the
        # permission checks that load what the view needs: a client over its limit costs no read. A POST's
        # Idempotency-Key is claimed (or its kept answer replayed) as soon as the caller is known, before
        # anything is loaded for the handler, and in autocommit: its row is seen at once by a retry.
        self.format_kwarg = self.get_format_suffix(**kwargs)
        request.accepted_renderer, request.accepted_media_type = self.perform_content_negotiation(request)
        self.perform_authentication(request)
        self.check_throttles(request)
        self.idempotency_claim = idempotency.claim(request)
        self.check_permissions(request)

    def open_write_transaction(self) -> None:
        """One transaction from here to the handler's answer, for a write that locks what it loads: the
        lock is held from the read to the write, and an error answer rolls the whole of it back."""
        if not self.in_write_transaction:
            self.write_scope.enter_context(transaction.atomic())
            self.in_write_transaction = True

    def roll_back_write_transaction(self) -> None:
        """End the write transaction now, undoing it."""
        transaction.set_rollback(True)
        self.write_scope.close()
        self.in_write_transaction = False

    def handle_exception(self, exc):
        if isinstance(exc, idempotency.Replay):
            return exc.response
        if self.in_write_transaction:
            transaction.set_rollback(True)  # answered below, as a 4xx: nothing of the write may stay
        return super().handle_exception(exc)

    def throttled(self, request, wait):
        # Retry-After and the X-RateLimit-* headers come from the quota (accounts.ratelimit).
        raise exceptions.Throttled(detail="rate limit exceeded")
