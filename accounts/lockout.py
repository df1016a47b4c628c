"""Login abuse (the site's and the admin's login pages), counted in the shared cache (Redis when REDIS_URL
is set, so every server process counts together), per client address as core.ratelimit buckets it
(IPv6 per /64):

- a rate limit: at most LOGIN_RATE_LIMIT_PER_MINUTE login POSTs a minute from one address, then a 429
  page with Retry-After, before the form or a password is looked at (`rate_limited_login`);
- a lockout: LOGIN_FAILURE_LIMIT failed logins for one username from one address lock that pair out, and
  failed logins for LOGIN_SPRAY_LIMIT different usernames from one address (a password spray) lock that
  address out, each for LOGIN_LOCKOUT_SECONDS from its first failure. While locked, the password is not
  even checked, so guessing goes no further; other addresses are not affected, so nobody can lock a user
  out from elsewhere.

A username that does not exist is counted exactly as one that does, and costs the same password hash
(Django's ModelBackend hashes the password it was given either way): a failure tells nothing about the
username, and trying unknown ones is no cheaper a way round the lockout.
"""

from functools import wraps

from django.conf import settings
from django.core.cache import cache
from django.http import HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string

from core.api.busy import RETRY_SOON
from core.cache import CountersUnavailable, increment
from core.ratelimit import charge, client_bucket


def _pair_key(username: str, address: str) -> str:
    return f"login-failures:{address}:{username.strip().casefold()}"


def _spray_key(address: str) -> str:
    return f"login-usernames:{address}"


def is_locked(username: str, address: str) -> bool:
    counts = cache.get_many([_pair_key(username, address), _spray_key(address)])
    return (counts.get(_pair_key(username, address), 0) >= settings.LOGIN_FAILURE_LIMIT
            or counts.get(_spray_key(address), 0) >= settings.LOGIN_SPRAY_LIMIT)


def record_failure(username: str, address: str) -> None:
    [failures] = increment([_pair_key(username, address)], settings.LOGIN_LOCKOUT_SECONDS)
    if failures == 1:  # the first failure of this username from there: one more username tried
        increment([_spray_key(address)], settings.LOGIN_LOCKOUT_SECONDS)


def clear(username: str, address: str) -> None:
    """A successful login ends its username's series; the address's count of usernames stays."""
    cache.delete(_pair_key(username, address))


def lockout_minutes() -> int:
    return max(1, round(settings.LOGIN_LOCKOUT_SECONDS / 60))


def rate_limited_login(view):
    """A login view whose POSTs count against the client address's LOGIN_RATE_LIMIT_PER_MINUTE; over it, a
    429 page saying when to retry, and the view (its form, the password hash) does not run. When the count
    cannot be taken (Redis out of reach), a 503 page, and the view does not run either: a login is never
    checked without its limits."""

    @wraps(view)
    def limited(request, *args, **kwargs):
        if request.method == "POST":
            try:
                quota = charge((f"login:{client_bucket(request)}", settings.LOGIN_RATE_LIMIT_PER_MINUTE))
            except CountersUnavailable:  # Redis refused, or did not answer within REDIS_TIMEOUT
                return HttpResponse(render_to_string("registration/login_unavailable.html", request=request),
                                    status=503, headers=RETRY_SOON)
            if quota.exceeded:
                response = render(request, "registration/login_limited.html",
                                  {"retry_after": quota.retry_after()}, status=429)
                response["Retry-After"] = str(quota.retry_after())
                return response
        return view(request, *args, **kwargs)

    return limited
