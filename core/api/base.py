"""The base of every API view."""

from django.http import Http404
from rest_framework import exceptions
from rest_framework.parsers import MultiPartParser
from rest_framework.viewsets import ViewSet

from core import idempotency


class ApiViewSet(ViewSet):
    # The id of this request's claim on its Idempotency-Key, whose answer is kept for retries.
    idempotency_claim: int | None = None
    # Actions that receive files: multipart/form-data; every other action takes JSON only (a form is a 415).
    upload_actions: frozenset[str] = frozenset()

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
        # Idempotency-Key is claimed (or its kept answer replayed) once the caller's access is checked: a
        # caller who has left the project since the first answer gets the 404 or 403 of today, not a replay.
        self.format_kwarg = self.get_format_suffix(**kwargs)
        request.accepted_renderer, request.accepted_media_type = self.perform_content_negotiation(request)
        self.perform_authentication(request)
        self.check_throttles(request)
        self.check_permissions(request)
        self.idempotency_claim = idempotency.claim(request)

    def handle_exception(self, exc):
        if isinstance(exc, idempotency.Replay):
            return exc.response
        return super().handle_exception(exc)

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        if self.idempotency_claim is not None:
            idempotency.keep(self.idempotency_claim, response)
        return response

    def throttled(self, request, wait):
        # Retry-After and the X-RateLimit-* headers come from the quota (accounts.ratelimit).
        raise exceptions.Throttled(detail="rate limit exceeded")
