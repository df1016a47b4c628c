"""The base of every API view."""

from rest_framework import exceptions
from rest_framework.viewsets import ViewSet

from core import idempotency


class ApiViewSet(ViewSet):
    # The id of this request's claim on its Idempotency-Key, whose answer is kept for retries.
    idempotency_claim: int | None = None

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
