"""Rate limits: fixed one-minute windows counted in the shared cache (core.cache: Redis when REDIS_URL is
set, so every server process counts together), and the client address they fall back on.

Who is counted where is decided by the callers: accounts/ratelimit.py for the API (per credential, per
user, per address), accounts/lockout.py for the login pages.

The client address is REMOTE_ADDR. Behind a proxy the server sets it from X-Forwarded-For only when the
proxy is one of its trusted addresses (gunicorn/uvicorn `--forwarded-allow-ips`), never from a header
any client could send. IPv6 clients count per /64, the block one subscriber usually holds.
"""

import ipaddress
import time
from dataclasses import dataclass, replace

from .cache import decrement, increment

WINDOW_SECONDS = 60


@dataclass(frozen=True)
class Quota:
    limit: int
    count: int
    reset_at: int  # Unix time at which the window ends
    keys: tuple[str, ...] = ()  # the counters the request was counted in

    @property
    def exceeded(self) -> bool:
        return self.count > self.limit

    @property
    def remaining(self) -> int:
        return max(0, self.limit - self.count)

    def retry_after(self) -> int:
        return max(1, self.reset_at - int(time.time()))

    def headers(self) -> dict[str, str]:
        headers = {"X-RateLimit-Limit": str(self.limit), "X-RateLimit-Remaining": str(self.remaining),
                   "X-RateLimit-Reset": str(self.reset_at)}
        if self.exceeded:
            headers["Retry-After"] = str(self.retry_after())
        return headers


def charge(*limits: tuple[str, int]) -> Quota:
    """Count one request in each (bucket, limit per minute), in one round trip; the quota nearest its end
    (an exceeded one first), which is what the client is told."""
    return min(charge_each(*limits), key=lambda quota: (not quota.exceeded, quota.remaining))


def charge_each(*limits: tuple[str, int]) -> list[Quota]:
    """Count one request in each (bucket, limit per minute), in one round trip; the quota of each, in order."""
    window = int(time.time()) // WINDOW_SECONDS
    keys = tuple(f"ratelimit:{bucket}:{window}" for bucket, _ in limits)
    counts = increment(list(keys), WINDOW_SECONDS)
    return [Quota(limit=limit, count=count, reset_at=(window + 1) * WINDOW_SECONDS, keys=keys)
            for (_, limit), count in zip(limits, counts, strict=True)]


def uncharge(quota: Quota) -> Quota:
    """Give back the request counted in `quota`'s counters (an answer that does not count); the quota now."""
    decrement(list(quota.keys), WINDOW_SECONDS)
    return replace(quota, count=quota.count - 1)


def client_bucket(request) -> str:
    """The bucket of the request's client address (`request` Django's, or anything with META)."""
    return address_bucket(request.META.get("REMOTE_ADDR") or "unknown")


def address_bucket(remote: str) -> str:
    """The bucket of a client address as the server gives it (REMOTE_ADDR, an ASGI scope's client)."""
    try:
        address = ipaddress.ip_address(remote)
    except ValueError:  # a Unix socket peer: one bucket per name
        return f"address:{remote}"
    if address.version == 6:
        if address.ipv4_mapped is not None:
            return f"address:{address.ipv4_mapped}"
        return f"address:{ipaddress.ip_network(f'{address}/64', strict=False)}"
    return f"address:{address}"
