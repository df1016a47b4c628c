"""Open websockets, counted (decisions.md, "availability limits"), so that no account fills the servers with
sockets, and sockets never take what requests need:

- per user: at most WS_MAX_PER_USER (20) open at once, across every server process when REDIS_URL is set
  (else in this process, the only one). Each open socket holds a lease in a sorted set of its user's (the
  socket's id, scored by when the lease ends): taking one drops the ended leases, counts the rest and adds
  its own in one atomic step (a Lua script, one round trip). Each process renews the leases of its sockets
  every LEASE_RENEW_SECONDS in one round trip, so those of a process that died end within LEASE_SECONDS.
- per server process: at most WEB_MAX_WEBSOCKETS (10,000). Websockets and HTTP connections are counted
  apart (config/workers.py counts the latter), so sockets, which any account may open, never take a
  worker's room for requests: only this limit's worth of descriptors.

Redis out of reach raises core.cache.CountersUnavailable, as the rate limits do.
"""

import logging
import threading
import time
import uuid
from dataclasses import dataclass, field

from asgiref.sync import sync_to_async
from django.conf import settings

from .cache import cache_key, counters_reached, redis_client
from .loops import Periodic

logger = logging.getLogger(__name__)

LEASE_SECONDS = 60
LEASE_RENEW_SECONDS = 20

# KEYS[1]: the user's leases; ARGV: now, the new lease's end, the limit, its id. 1 if taken, 0 if over the limit.
TAKE_LEASE = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
    return 0
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('EXPIRE', KEYS[1], math.ceil(ARGV[2] - ARGV[1]))
return 1
"""


@dataclass(eq=False)
class Lease:
    user_id: int
    socket_id: str = field(default_factory=lambda: uuid.uuid4().hex)


def _key(user_id: int) -> str:
    return cache_key(f"sockets:user:{user_id}")


class UserSockets:
    """The per-user count: Redis's leases, or this process's own sets without Redis."""

    def __init__(self):
        self._lock = threading.Lock()
        self._local: dict[int, set[str]] = {}

    def take(self, lease: Lease) -> bool:
        """Whether the user may open one more socket; if so it is counted."""
        limit = settings.WS_MAX_PER_USER
        redis = redis_client()
        if redis is None:
            with self._lock:
                held = self._local.setdefault(lease.user_id, set())
                if len(held) >= limit:
                    return False
                held.add(lease.socket_id)
                return True
        now = time.time()
        with counters_reached():
            return bool(redis.register_script(TAKE_LEASE)(
                keys=[_key(lease.user_id)], args=[now, now + LEASE_SECONDS, limit, lease.socket_id]))

    def give_back(self, lease: Lease) -> None:
        redis = redis_client()
        if redis is None:
            with self._lock:
                held = self._local.get(lease.user_id, set())
                held.discard(lease.socket_id)
                if not held:
                    self._local.pop(lease.user_id, None)
            return
        with counters_reached():
            redis.zrem(_key(lease.user_id), lease.socket_id)

    def renew(self, leases: list[Lease]) -> None:
        redis = redis_client()
        if redis is None or not leases:
            return
        pipeline = redis.pipeline(transaction=False)
        ends = time.time() + LEASE_SECONDS
        by_user: dict[int, dict[str, float]] = {}
        for lease in leases:
            by_user.setdefault(lease.user_id, {})[lease.socket_id] = ends
        for user_id, renewed in by_user.items():
            pipeline.zadd(_key(user_id), renewed, xx=True)  # a lease given back meanwhile stays gone
            pipeline.expire(_key(user_id), LEASE_SECONDS, gt=True)
        with counters_reached():
            pipeline.execute()


USER_SOCKETS = UserSockets()


class OpenSockets(Periodic):
    """The websockets open in this process (its event loop: `items` are their leases), and the renewal of their
    leases every LEASE_RENEW_SECONDS while any is open."""

    count = 0  # in this process, every loop together

    @classmethod
    def process_is_full(cls) -> bool:
        return cls.count >= settings.WEB_MAX_WEBSOCKETS

    async def open(self, user_id: int) -> Lease | None:
        """A lease for one more socket of this user, or None when they hold WS_MAX_PER_USER already."""
        lease = Lease(user_id)
        OpenSockets.count += 1  # before the round trip: the handshakes meanwhile see it
        try:
            taken = await sync_to_async(USER_SOCKETS.take, thread_sensitive=False)(lease)
        except BaseException:
            OpenSockets.count -= 1
            raise
        if not taken:
            OpenSockets.count -= 1
            return None
        self.add(lease)
        return lease

    async def close(self, lease: Lease) -> None:
        OpenSockets.count -= 1
        self.discard(lease)
        try:
            await sync_to_async(USER_SOCKETS.give_back, thread_sensitive=False)(lease)
        except Exception:  # Redis out of reach: the lease ends by itself within LEASE_SECONDS
            logger.warning("the lease of a closed websocket of user %s was not given back", lease.user_id)

    def period(self) -> float:
        return LEASE_RENEW_SECONDS

    async def tick(self) -> None:
        await sync_to_async(USER_SOCKETS.renew, thread_sensitive=False)(list(self.items))
