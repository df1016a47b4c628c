"""API rate limits (decisions.md, "rate limits"): a fixed one-minute window per credential (a bearer token,
or a user's browser sessions together) and per user for authenticated requests, per client address for every other
request under /api/ (no credential, a malformed or an invalid one: invalid-token floods count against
their address). Every API answer tells the client where it stands in `X-RateLimit-*` headers. Websocket
handshakes count alike (accounts/websocket.py).

Authenticated requests are counted by CredentialThrottle, DRF's throttle of every API view (core.api.base
runs it right after authentication, before the view reads anything); the middleware counts the others.
"""

import logging

from django.conf import settings
from rest_framework.throttling import BaseThrottle

from core.api.busy import BUSY, RETRY_SOON
from core.api.errors import error_response
from core.api.paths import is_api
from core.cache import CountersUnavailable
from core.ratelimit import Quota, charge, client_bucket, uncharge

from .models import ApiToken
from .services import BEARER

LIMITED = "rate limit exceeded"
QUOTA = "tracker.rate_quota"  # the request's META key of an authenticated request's Quota
logger = logging.getLogger(__name__)


class CredentialThrottle(BaseThrottle):
    """Counts an authenticated request against its credential and its user; anonymous ones pass here (the
    middleware has counted them against their address). The quota is kept on the request for its headers."""

    quota: Quota | None = None

    def allow_request(self, request, view) -> bool:
        user = request.user
        if not user.is_authenticated:
            return True
        self.quota = charge_credential(user, request.auth if isinstance(request.auth, ApiToken) else None)
        # For the middleware's headers: DRF's request shares its META with Django's, which the middleware holds.
        request.META[QUOTA] = self.quota
        return not self.quota.exceeded

    def wait(self) -> int:
        return self.quota.retry_after()


def charge_credential(user, token: ApiToken | None) -> Quota:
    """One request of an authenticated user: against their token (None: their sessions) and themselves."""
    credential = f"token:{token.pk}" if token is not None else f"session:{user.pk}"
    return charge((credential, settings.API_RATE_LIMIT_PER_MINUTE),
                  (f"user:{user.pk}", settings.API_USER_RATE_LIMIT_PER_MINUTE))


def charge_address(bucket: str) -> Quota:
    """One request without a valid credential, against its client address's bucket (core.ratelimit)."""
    return charge((bucket, settings.API_ANON_RATE_LIMIT_PER_MINUTE))


def may_carry_credential(request) -> bool:
    """A well-formed bearer token or a session cookie: the request may authenticate, and be counted so."""
    return (BEARER.fullmatch(request.headers.get("Authorization", "").strip()) is not None
            or settings.SESSION_COOKIE_NAME in request.COOKIES)


class ApiRateLimitMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not is_api(request):
            return self.get_response(request)
        try:
            return self.counted(request)
        except CountersUnavailable:  # Redis refused, or did not answer within REDIS_TIMEOUT: nothing was done
            logger.warning("Redis did not count a request to %s", request.path)
            return error_response(BUSY, status=503, headers=RETRY_SOON)

    def counted(self, request):
        quota = None
        if not may_carry_credential(request):
            quota = charge_address(client_bucket(request))  # certainly anonymous: counted before any work
            if quota.exceeded:
                return stamped(error_response(LIMITED, status=429), quota)
        response = self.get_response(request)
        quota = quota or request.META.get(QUOTA)
        if quota is None:  # a credential that did not authenticate, or a route that takes none
            quota = charge_address(client_bucket(request))
            if quota.exceeded:
                response = error_response(LIMITED, status=429)
        elif response.status_code == 304:
            # A conditional read answered "not modified" does not count (decisions.md, "Conditional requests"):
            # it was counted before the view ran, as every request is, and is given back now.
            quota = uncharge(quota)
        return stamped(response, quota)


def stamped(response, quota: Quota):
    for name, value in quota.headers().items():
        response[name] = value
    return response
