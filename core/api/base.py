"""The base of every API view."""

from collections.abc import Collection
from contextlib import ExitStack
from functools import cache

from django.db import transaction
from django.http import Http404
from rest_framework import exceptions
from rest_framework.parsers import MultiPartParser
from rest_framework.serializers import Serializer
from rest_framework.viewsets import ViewSet

from core import idempotency
from core.errors import RuleViolation

READS = frozenset({"GET", "HEAD"})


class ApiViewSet(ViewSet):
    # The query parameters each action reads (an input serializer: its fields; or the names), the same its schema
    # declares. A read with any other is refused (422 naming it) before its handler runs: a misspelt filter must
    # not silently answer everything. An action left out takes none.
    query_parameters: dict[str, type[Serializer] | Collection[str]] = {}
    # The id of this request's claim on its Idempotency-Key, whose answer is kept for retries.
    idempotency_claim: int | None = None
    # What closes the request's write transaction, once it opened one (open_write_transaction).
    write_scope: ExitStack | None = None
    in_write_transaction = False
    # Actions that receive files: multipart/form-data; every other action takes JSON only (a form is a 415).
    upload_actions: frozenset[str] = frozenset()

    def dispatch(self, request, *args, **kwargs):
        # The answer is kept for an Idempotency-Key once the write transaction has ended (committed, or rolled
        # back by an error answer): kept inside it, it would go with a rollback.
        with ExitStack() as self.write_scope:
            response = super().dispatch(request, *args, **kwargs)
        if self.idempotency_claim is not None:
            idempotency.keep(self.idempotency_claim, response)
        return response

    def get_parsers(self):
        # DRF asks before it sets self.action (the schema generator sets it first, with no request).
        request = getattr(self, "request", None)
        action = self.action_map.get(request.method.lower()) if request is not None else self.action
        if action in self.upload_actions:
            return [MultiPartParser()]
        return super().get_parsers()

    @classmethod
    def largest_upload(cls) -> int:
        """The largest body an upload action of this view takes (views with upload_actions say)."""
        raise NotImplementedError

    @classmethod
    def body_limit_for(cls, request, match) -> int | None:
        """The upload body this view admits for a request of which only the path and headers are known:
        the caller authenticated and allowed to upload here (for a project's route, a member with the
        role; core.body_limit asks before it lets a large body through); None for anything else."""
        action = match.func.actions.get(request.method.lower())
        if action not in cls.upload_actions:
            return None
        # As the view function of ViewSet.as_view() sets a view up, up to the authentication and permissions.
        view = cls(**match.func.initkwargs)
        view.action_map, view.request, view.args, view.kwargs = match.func.actions, request, match.args, match.kwargs
        view.request = view.initialize_request(request, *match.args, **match.kwargs)
        try:
            view.perform_authentication(view.request)
            view.check_permissions(view.request)
        except (exceptions.APIException, Http404):
            return None
        return cls.largest_upload()

    def initial(self, request, *args, **kwargs):
        # DRF's initial(), with the throttle (accounts/ratelimit.py) right after authentication, before the
        # permission checks that load what the view needs: a client over its limit costs no read. A POST's
        # Idempotency-Key is claimed (or its kept answer replayed) as soon as the caller is known, before
        # anything is loaded for the handler, and in autocommit: its row is seen at once by a retry. A kept
        # answer is replayed only once the caller's access is checked as for any request: a caller who has left
        # the project since gets the 404 or 403 of today, not what was answered then.
        self.format_kwarg = self.get_format_suffix(**kwargs)
        request.accepted_renderer, request.accepted_media_type = self.perform_content_negotiation(request)
        self.perform_authentication(request)
        self.check_throttles(request)
        try:
            self.idempotency_claim = idempotency.claim(request)
        except idempotency.Replay:
            self.check_permissions(request)
            raise
        self.check_permissions(request)
        if request.method in READS:
            self.check_query_parameters(request)

    def check_query_parameters(self, request) -> None:
        unknown = sorted(set(request.query_params) - self.parameter_names(self.action))
        if unknown:
            raise RuleViolation(f"{unknown[0]}: unknown query parameter", field=unknown[0])

    @classmethod
    @cache
    def parameter_names(cls, action: str) -> frozenset[str]:
        declared = cls.query_parameters.get(action, ())
        if isinstance(declared, type) and issubclass(declared, Serializer):
            return frozenset(declared().fields)
        return frozenset(declared)

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
