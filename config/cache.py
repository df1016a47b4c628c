"""Django's Redis cache with one client, and so one connection pool, per process.

Django keeps a cache object per thread and async context, and the ASGI handler serves each request in
a context of its own: with the stock RedisCache every request built a new client, whose new pool
opened a new Redis connection (one per API request, through the rate limiter). redis-py's client and
pool are safe to share between threads, and a forked worker's pool reconnects by itself.
"""

import threading

from django.core.cache.backends.redis import RedisCache, RedisCacheClient

_clients: dict[str, RedisCacheClient] = {}
_clients_lock = threading.Lock()


class SharedRedisCache(RedisCache):
    @property
    def _cache(self) -> RedisCacheClient:
        key = repr((self._servers, self._options))
        client = _clients.get(key)
        if client is None:
            with _clients_lock:
                client = _clients.setdefault(key, self._class(self._servers, **self._options))
        return client

    def incr_expiring(self, key: str, timeout: int) -> int:
        """Add one to the counter at `key`, which starts at 1 and expires `timeout` seconds after that: one
        round trip, where Django's add() and incr() take two. No MULTI/EXEC around the two commands: should
        the expiry be lost, the next count sets it."""
        key = self.make_and_validate_key(key)
        with self._cache.get_client(key, write=True).pipeline(transaction=False) as pipe:
            count, _ = pipe.incr(key).expire(key, timeout, nx=True).execute()
        return count
