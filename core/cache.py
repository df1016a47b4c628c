"""Counters in the shared cache: Redis when REDIS_URL is set (every process counts together), Django's
local-memory cache otherwise.

On Redis the counters go through one client per process (redis-py's clients are thread-safe, each with its
pool of connections), under the keys Django's cache would give them. Django builds its cache backends per
request context, so `django.core.cache.cache` meant a new django-redis client for every request (every
request runs in a context of its own): about 1.2 ms of CPU each, more than the count itself.
"""

import threading
from contextlib import contextmanager

import redis
from django.conf import settings
from django.core.cache import cache
from django.core.cache.backends.base import default_key_func
from redis import ConnectionError as RedisConnectionError
from redis import TimeoutError as RedisTimeoutError

REDIS_BACKEND = "django_redis.cache.RedisCache"
_clients: dict[tuple, redis.Redis] = {}
_clients_lock = threading.Lock()


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


def redis_client() -> redis.Redis | None:
    """The process's client of the cache's Redis (settings.CACHES), or None when the cache is not on Redis."""
    config = settings.CACHES["default"]
    if config["BACKEND"] != REDIS_BACKEND:
        return None
    options = config.get("OPTIONS", {})
    key = (config["LOCATION"], options.get("SOCKET_CONNECT_TIMEOUT"), options.get("SOCKET_TIMEOUT"))
    client = _clients.get(key)
    if client is None:
        with _clients_lock:
            client = _clients.setdefault(key, redis.Redis.from_url(
                config["LOCATION"], socket_connect_timeout=key[1], socket_timeout=key[2]))
    return client


def cache_key(key: str) -> str:
    """`key` as Django's cache stores it (its KEY_PREFIX and VERSION): the same counter either way."""
    config = settings.CACHES["default"]
    return default_key_func(key, config.get("KEY_PREFIX", ""), config.get("VERSION", 1))


def increment(keys: list[str], timeout: int) -> list[int]:
    """Add one to each counter, which starts at 1 and expires `timeout` seconds after that; the new counts.

    On Redis, one round trip for them all (INCR, then EXPIRE NX: should an expiry be lost, the next count
    sets it). Elsewhere add() or incr() per key.
    """
    client = redis_client()
    if client is None:
        return [_add_or_incr(key, timeout) for key in keys]
    pipeline = client.pipeline(transaction=False)
    for key in keys:
        pipeline.incr(cache_key(key))
        pipeline.expire(cache_key(key), timeout, nx=True)
    return _executed(pipeline)[::2]


def decrement(keys: list[str], timeout: int) -> None:
    """Take one off each counter (a count given back), in one round trip on Redis; a counter that expired
    meanwhile lives no longer than `timeout` seconds again."""
    client = redis_client()
    if client is None:
        for key in keys:
            try:
                cache.decr(key)
            except ValueError:  # expired meanwhile: nothing to give back
                pass
        return
    pipeline = client.pipeline(transaction=False)
    for key in keys:
        pipeline.decr(cache_key(key))
        pipeline.expire(cache_key(key), timeout, nx=True)
    _executed(pipeline)


def _executed(pipeline) -> list:
    with counters_reached():
        return pipeline.execute()


def _add_or_incr(key: str, timeout: int) -> int:
    if cache.add(key, 1, timeout):
        return 1
    try:
        return cache.incr(key)
    except ValueError:  # expired between add() and incr()
        cache.add(key, 1, timeout)
        return 1
