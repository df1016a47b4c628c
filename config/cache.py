"""Django's Redis cache with one client, and so one connection pool, per process.

Django keeps a cache object per thread and async context, and the ASGI handler serves each request in
a context of its own: with the stock RedisCache every request built a new client, whose new pool
opened a new Redis connection (one per API request, through the rate limiter). redis-py's client and
pool are safe to share between threads, and a forked worker's pool reconnects by itself.
"""

import threading
from collections.abc import Callable

from django.core.cache.backends.redis import RedisCache, RedisCacheClient

_clients: dict[str, RedisCacheClient] = {}
_clients_lock = threading.Lock()


class ReusedRedisCacheClient(RedisCacheClient):
    """Django's client builds a new redis.Redis for every command, about 0.1 ms of CPU each (its table of
    response callbacks); one per connection pool serves them all, as redis.Redis is safe to share."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._redis_by_pool = {}

    def get_client(self, key=None, *, write=False):
        pool = self._get_connection_pool(write)
        client = self._redis_by_pool.get(id(pool))
        if client is None:
            client = self._redis_by_pool.setdefault(id(pool), self._client(connection_pool=pool))
        return client


class SharedRedisCache(RedisCache):
    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = ReusedRedisCacheClient

    @property
    def _cache(self) -> RedisCacheClient:
        key = repr((self._servers, self._options))
        client = _clients.get(key)
        if client is None:
            with _clients_lock:
                client = _clients.setdefault(key, self._class(self._servers, **self._options))
        return client

    def start_incr_expiring(self, key: str, timeout: int) -> Callable[[], int]:
        """Add one to the counter at `key`, which starts at 1 and expires `timeout` seconds after that, in one
        round trip (Django's add() and incr() take two) that can overlap other work: the commands leave now,
        and the function returned waits for the count. It must be called: it gives the connection back.

        No MULTI/EXEC around the two commands: should the expiry be lost, the next count sets it.
        """
        key = self.make_and_validate_key(key)
        pool = self._cache.get_client(key, write=True).connection_pool
        connection = pool.get_connection()
        try:
            connection.send_packed_command(connection.pack_commands([("INCR", key), ("EXPIRE", key, timeout, "NX")]))
        except BaseException:
            _discard(pool, connection)
            raise

        def count() -> int:
            try:
                count, _ = connection.read_response(), connection.read_response()
            except BaseException:
                _discard(pool, connection)  # a reply may be left unread on it
                raise
            pool.release(connection)
            return count

        return count


def _discard(pool, connection) -> None:
    connection.disconnect()
    pool.release(connection)
