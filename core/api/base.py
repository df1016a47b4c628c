"""The base of every API view."""

from rest_framework import exceptions
from rest_framework.viewsets import ViewSet


class ApiViewSet(ViewSet):
    def initial(self, request, *args, **kwargs):
        # DRF's initial(), with the throttle (accounts/ratelimit.py) right after authentication, before the
        # permission checks that load what the view needs: a client over its limit costs no read.
        self.format_kwarg = self.get_format_suffix(**kwargs)
        request.accepted_renderer, request.accepted_media_type = self.perform_content_negotiation(request)
        self.perform_authentication(request)
        self.check_throttles(request)
        self.check_permissions(request)

    def throttled(self, request, wait):
        # Retry-After and the X-RateLimit-* headers come from the quota (accounts.ratelimit).
        raise exceptions.Throttled(detail="rate limit exceeded")
