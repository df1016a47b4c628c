"""API rate limits (decisions.md, "rate limits"): a fixed one-minute window per token (counted by its
digest) for requests that carry a valid token, per client address for every other request under /api/
(no token, a malformed or an invalid one: invalid-token floods count against their address). Each request
charges one counter in Django's default cache, Redis when REDIS_URL is set, so every server process counts
together; every API answer tells the client where it stands in `X-RateLimit-*` headers.

The client address is REMOTE_ADDR. Behind a proxy the server sets it from X-Forwarded-For only when the
proxy is one of its trusted addresses (gunicorn/uvicorn `--forwarded-allow-ips`), never from a header
any client could send. IPv6 clients count per /64, the block one subscriber usually holds.
"""

import ipaddress
import time
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.http import JsonResponse
from rest_framework.exceptions import Throttled

from accounts.services import BEARER
from config.api.paths import is_api

WINDOW_SECONDS = 60


@dataclass(frozen=True)
class Quota:
    limit: int
    count: int
    reset_at: int  # Unix time at which the window ends

    @property
    def exceeded(self) -> bool:
        return self.count > self.limit

    def retry_after(self) -> int:
        return max(1, self.reset_at - int(time.time()))

    def headers(self) -> dict[str, str]:
        return {"X-RateLimit-Limit": str(self.limit), "X-RateLimit-Remaining": str(max(0, self.limit - self.count)),
                "X-RateLimit-Reset": str(self.reset_at)}


def charge(bucket: str, limit: int) -> Quota:
    return start_charge(bucket, limit)()


def start_charge(bucket: str, limit: int) -> Callable[[], Quota]:
    """charge() in two halves: the count is sent now, and the function returned reads the quota, so that
    the round trip to Redis can overlap other work. The function must be called."""
    window = int(time.time()) // WINDOW_SECONDS
    count = start_increment(f"ratelimit:{bucket}:{window}", WINDOW_SECONDS)
    return lambda: Quota(limit=limit, count=count(), reset_at=(window + 1) * WINDOW_SECONDS)


def start_increment(key: str, timeout: int) -> Callable[[], int]:
    # `cache` is a proxy: an isinstance() check on it would never see the Redis cache behind it.
    start_incr_expiring = getattr(cache, "start_incr_expiring", None)
    if start_incr_expiring is not None:
        return start_incr_expiring(key, timeout)
    count = _add_or_incr(key, timeout)
    return lambda: count


def _add_or_incr(key: str, timeout: int) -> int:
    if cache.add(key, 1, timeout):
        return 1
    try:
        return cache.incr(key)
    except ValueError:  # expired between add() and incr()
        cache.add(key, 1, timeout)
        return 1


def client_bucket(request) -> str:
    remote = request.META.get("REMOTE_ADDR") or "unknown"
    try:
        address = ipaddress.ip_address(remote)
    except ValueError:  # a Unix socket peer: one bucket per name
        return f"address:{remote}"
    if address.version == 6:
        if address.ipv4_mapped is not None:
            return f"address:{address.ipv4_mapped}"
        return f"address:{ipaddress.ip_network(f'{address}/64', strict=False)}"
    return f"address:{address}"


def charge_address(request) -> Quota:
    return charge(client_bucket(request), settings.API_ANON_RATE_LIMIT_PER_MINUTE)


def start_token_charge(digest: str) -> Callable[[], Quota]:
    """A token's charge, counted by its digest so that it can leave before the token is looked up (the
    bearer authentication reads it once the token is found). An invalid token's count stays on a key no
    valid token has, and its request is charged to its address as well."""
    return start_charge(f"token:{digest}", settings.API_RATE_LIMIT_PER_MINUTE)


def admit_token(request, quota: Quota) -> None:
    """Called by the bearer authentication once the token is known to be valid; `request` is Django's."""
    request.rate_quota = quota
    if quota.exceeded:
        raise Throttled(detail="rate limit exceeded")  # Retry-After: stamped by the middleware


def too_many() -> JsonResponse:
    return JsonResponse({"error": "rate limit exceeded"}, status=429)


class ApiRateLimitMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not is_api(request):
            return self.get_response(request)
        quota = None
        if not BEARER.fullmatch(request.headers.get("Authorization", "").strip()):
            quota = charge_address(request)  # certainly no valid token: counted before any work
            if quota.exceeded:
                return self._stamped(too_many(), quota)
        response = self.get_response(request)
        quota = quota or getattr(request, "rate_quota", None)
        if quota is None:  # a well-formed token that did not authenticate, or a route that takes none
            quota = charge_address(request)
            if quota.exceeded:
                response = too_many()
        return self._stamped(response, quota)

    @staticmethod
    def _stamped(response, quota: Quota):
        for name, value in quota.headers().items():
            response[name] = value
        if quota.exceeded:
            response["Retry-After"] = str(quota.retry_after())
        return response
