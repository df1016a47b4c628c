"""Login lockout: LOGIN_FAILURE_LIMIT failed logins for one username from one client address lock that
pair out for LOGIN_LOCKOUT_SECONDS, counted in the shared cache (Redis when REDIS_URL is set). While
locked, the password is not even checked, so guessing goes no further; other addresses and other
usernames are not affected, so nobody can lock a user out from elsewhere.
"""

from django.conf import settings
from django.core.cache import cache


def _key(username: str, address: str) -> str:
    return f"login-failures:{address}:{username.strip().casefold()}"


def is_locked(username: str, address: str) -> bool:
    return cache.get(_key(username, address), 0) >= settings.LOGIN_FAILURE_LIMIT


def record_failure(username: str, address: str) -> None:
    key = _key(username, address)
    # The lock lasts LOGIN_LOCKOUT_SECONDS from the first failure of the series.
    if not cache.add(key, 1, settings.LOGIN_LOCKOUT_SECONDS):
        try:
            cache.incr(key)
        except ValueError:  # expired in between
            cache.add(key, 1, settings.LOGIN_LOCKOUT_SECONDS)


def clear(username: str, address: str) -> None:
    cache.delete(_key(username, address))


def lockout_minutes() -> int:
    return max(1, round(settings.LOGIN_LOCKOUT_SECONDS / 60))
