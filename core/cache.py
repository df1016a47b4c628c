"""Counters in the shared cache: Redis through django-redis when REDIS_URL is set (every process counts
together), Django's local-memory cache otherwise."""

from contextlib import contextmanager

from django.core.cache import cache
from redis import ConnectionError as RedisConnectionError
from redis import TimeoutError as RedisTimeoutError


class CountersUnavailable(Exception):
    """Redis refused the counters, or did not answer within REDIS_TIMEOUT."""


@contextmanager
def counters_reached():
    """Around calls to the cache: Redis out of reach raises CountersUnavailable (a refused command is a bug,
    and stays what it is: a 500)."""
    try:
        yield
    except (RedisConnectionError, RedisTimeoutError) as error:
        raise CountersUnavailable from error


def increment(keys: list[str], timeout: int) -> list[int]:
    """Add one to each counter, which starts at 1 and expires `timeout` seconds after that; the new counts.

    On Redis, one round trip for them all (INCR, then EXPIRE NX: should an expiry be lost, the next count
    sets it). Elsewhere add() or incr() per key.
    """
    client = getattr(cache, "client", None)  # django-redis' client; `cache` is a proxy, isinstance() misses it
    if client is None:
        return [_add_or_incr(key, timeout) for key in keys]
    pipeline = client.get_client(write=True).pipeline(transaction=False)
    for key in keys:
        redis_key = cache.make_key(key)
        pipeline.incr(redis_key)
        pipeline.expire(redis_key, timeout, nx=True)
    with counters_reached():
        return pipeline.execute()[::2]


def _add_or_incr(key: str, timeout: int) -> int:
    if cache.add(key, 1, timeout):
        return 1
    try:
        return cache.incr(key)
    except ValueError:  # expired between add() and incr()
        cache.add(key, 1, timeout)
        return 1
