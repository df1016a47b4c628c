"""Login abuse (the site's and the admin's login pages), counted in the shared cache (Redis when REDIS_URL
is set, so every server process counts together), per client address as core.ratelimit buckets it
(IPv6 per /64):

- rate limits: at most LOGIN_RATE_LIMIT_PER_MINUTE login POSTs a minute from one address, and at most
  LOGIN_USERNAME_RATE_LIMIT_PER_MINUTE naming one username from any addresses (a flood spread over many
  addresses), then a 429 page with Retry-After, before the form or a password is looked at
  (`rate_limited_login`); a password that finds no turn to be checked in time (accounts/hashers.py) gets
  a 429 page too;
- a lockout: LOGIN_FAILURE_LIMIT failed logins for one username from one address lock that pair out, and
  failed logins for LOGIN_SPRAY_LIMIT different usernames from one address (a password spray) lock that
  address out, each for LOGIN_LOCKOUT_SECONDS from its first failure. While locked, the password is not
  even checked, so guessing goes no further; other addresses are not affected, so nobody can lock a user
  out from elsewhere.

A username that does not exist is counted exactly as one that does, and costs the same password hash
(Django's ModelBackend hashes the password it was given either way): a failure tells nothing about the
username, and trying unknown ones is no cheaper a way round the lockout.
"""

import hashlib
from collections.abc import Callable
from functools import wraps

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string

from core.api.busy import RETRY_SOON
from core.cache import CountersUnavailable, counters_reached, increment
from core.ratelimit import charge_each, client_bucket

from .hashers import PasswordChecksBusy

FROM_YOUR_ADDRESS = "Too many login attempts from your address."
FOR_THIS_USERNAME = "Too many login attempts for this username."
CHECKS_BUSY = "Too many logins are being checked right now."
RESETS_FROM_YOUR_ADDRESS = "Too many password reset requests from your address."


def _pair_key(username: str, address: str) -> str:
    return f"login-failures:{address}:{username.strip().casefold()}"


def _spray_key(address: str) -> str:
    return f"login-usernames:{address}"


def is_locked(username: str, address: str) -> bool:
    with counters_reached():
        counts = cache.get_many([_pair_key(username, address), _spray_key(address)])
    return (counts.get(_pair_key(username, address), 0) >= settings.LOGIN_FAILURE_LIMIT
            or counts.get(_spray_key(address), 0) >= settings.LOGIN_SPRAY_LIMIT)


def record_failure(username: str, address: str) -> None:
    [failures] = increment([_pair_key(username, address)], settings.LOGIN_LOCKOUT_SECONDS)
    if failures == 1:  # the first failure of this username from there: one more username tried
        increment([_spray_key(address)], settings.LOGIN_LOCKOUT_SECONDS)


def clear(username: str, address: str) -> None:
    """A successful login ends its username's series; the address's count of usernames stays."""
    with counters_reached():
        cache.delete(_pair_key(username, address))


def lockout_minutes() -> int:
    return max(1, round(settings.LOGIN_LOCKOUT_SECONDS / 60))


def rate_limited_login(view, *, counts: Callable[[HttpRequest], bool] = lambda request: True):
    """A login view whose POSTs (those that `counts` picks) count against the client address's
    LOGIN_RATE_LIMIT_PER_MINUTE and the username's LOGIN_USERNAME_RATE_LIMIT_PER_MINUTE; over either, a 429 page
    saying when to retry, and the view (its form, the password hash) does not run. A password that finds no turn
    to be checked in time gets a 429 page as well. When the counts cannot be taken or read (Redis out of reach), before the view or while it
    runs, a 503 page: a login is never checked without its limits, nor half done."""

    @wraps(view)
    def limited(request, *args, **kwargs):
        if request.method != "POST" or not counts(request):
            return view(request, *args, **kwargs)
        try:
            return over_limits(request) or view(request, *args, **kwargs)
        except CountersUnavailable:  # Redis refused, or did not answer within REDIS_TIMEOUT
            return unavailable_page(request)
        except PasswordChecksBusy:
            return limited_page(request, CHECKS_BUSY, retry_after=1)

    return limited


def unavailable_page(request) -> HttpResponse:
    return HttpResponse(render_to_string("registration/login_unavailable.html", request=request),
                        status=503, headers=RETRY_SOON)


def counted_reset(view):
    """The password reset view, whose POSTs count against the client address's LOGIN_RATE_LIMIT_PER_MINUTE (over
    it, a 429 page, before the form is looked at), and which counts each e-mail address asked for
    (`reset_allowed`). When the counts cannot be taken (Redis out of reach), a 503 page, for a known address
    and an unknown one alike."""

    @wraps(view)
    def counted(request, *args, **kwargs):
        try:
            if request.method == "POST":
                [by_address] = charge_each((f"password-reset:{client_bucket(request)}",
                                            settings.LOGIN_RATE_LIMIT_PER_MINUTE))
                if by_address.exceeded:
                    return limited_page(request, RESETS_FROM_YOUR_ADDRESS, by_address.retry_after(),
                                        title="Too many password reset requests")
            return view(request, *args, **kwargs)
        except CountersUnavailable:
            return unavailable_page(request)

    return counted


def reset_allowed(email: str) -> bool:
    """One more password reset asked for this address: whether it is within PASSWORD_RESET_EMAILS_PER_HOUR in
    the hour since the first. Counted whether or not a user has the address, so that nothing tells them apart."""
    [count] = increment([f"password-reset:{_name_digest(email)}"], 3600)
    return count <= settings.PASSWORD_RESET_EMAILS_PER_HOUR


def over_limits(request) -> HttpResponse | None:
    """A 429 page when this login POST goes over its address's or its username's limit, else None."""
    by_address, by_username = charge_each(
        (f"login:{client_bucket(request)}", settings.LOGIN_RATE_LIMIT_PER_MINUTE),
        (f"login-username:{_name_digest(request.POST.get('username', ''))}",
         settings.LOGIN_USERNAME_RATE_LIMIT_PER_MINUTE))
    if by_address.exceeded:
        return limited_page(request, FROM_YOUR_ADDRESS, by_address.retry_after())
    if by_username.exceeded:
        return limited_page(request, FOR_THIS_USERNAME, by_username.retry_after())
    return None


def _name_digest(username: str) -> str:
    """A username (or an e-mail address) as the counters name it: whatever its length, a key of fixed size."""
    return hashlib.sha256(username.strip().casefold().encode()).hexdigest()[:32]


def limited_page(request, reason: str, retry_after: int, title: str = "Too many login attempts") -> HttpResponse:
    response = render(request, "registration/login_limited.html",
                      {"reason": reason, "retry_after": retry_after, "title": title}, status=429)
    response["Retry-After"] = str(retry_after)
    return response
