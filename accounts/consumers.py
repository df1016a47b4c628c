"""What every authenticated websocket shares: being closed at once when its access ends, and refusing
input it has no use for.

Access ends by a message, sent after commit by the service that ends it (core.live), to groups every
socket joins as it is accepted:
- `token-{id}`: the sockets opened with that bearer token (revocation, expiry moved by the admin);
- `user-{id}-sockets`: every socket of that user, session or token (deactivation);
- `project-{id}-member-{user id}`: that user's board sockets for that project (removal from it);
- `session-{digest of the session key}`: the sockets opened with that browser session (logout);
- `user-{id}-session-sockets`: the sockets opened with any browser session of that user (a password reset,
  which ends them all).
A token's expiry has no event: each socket opened with an expiring token schedules its own close for
that moment. For what sends no message (a change made outside the services: shell, SQL, a deleted
token; a password changed, which ends the user's other sessions; a session expired or cleared; or a
change committed between the handshake's check and the joining of these groups), every process
rechecks the access of all the sockets it holds every ACCESS_RECHECK_SECONDS, in a few queries
whatever their number (AccessWatch), and closes those whose access has ended.

The sockets are read-only for clients: a binary frame, a text frame over MAX_FRAME_BYTES or one that
is not JSON closes the socket with a 4xxx code and one warning; valid JSON is ignored.
"""

import asyncio
import hashlib
import json
import logging
import time
from collections import defaultdict
from importlib import import_module

from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.contrib.auth import HASH_SESSION_KEY, SESSION_KEY
from django.utils import timezone
from django.utils.crypto import constant_time_compare

from core.live import send_after_commit
from core.lookups import any_of
from core.loops import Periodic
from core.metrics import BROADCAST_FRAMES, WEBSOCKETS

from .models import ApiToken, User

logger = logging.getLogger(__name__)

# Close codes, in the 4000-4999 range left to applications; the page does not reconnect after them.
ACCESS_LOST = 4403
BAD_FRAME = 4400
FRAME_TOO_BIG = 4413

CLOSE = {"type": "socket.revoke"}
ACCESS_RECHECK_SECONDS = 5.0


def token_group(token_id: int) -> str:
    return f"token-{token_id}"


def user_sockets_group(user_id: int) -> str:
    return f"user-{user_id}-sockets"


def user_session_sockets_group(user_id: int) -> str:
    return f"user-{user_id}-session-sockets"


def member_group(project_id: int, user_id: int) -> str:
    return f"project-{project_id}-member-{user_id}"


def session_group(session_key: str) -> str:
    # A digest: the key itself lets whoever holds it in a cookie act as the user, and group names sit in Redis.
    return f"session-{hashlib.sha256(session_key.encode()).hexdigest()}"


def close_sockets_after_commit(groups: list[str]) -> None:
    """Close, once the current transaction commits, every socket in these groups with ACCESS_LOST."""
    send_after_commit([(group, CLOSE) for group in groups])


def move_expiry_after_commit(token_id: int, expires_at) -> None:
    """Tell the sockets of a token its new expiry (None: none), once the current transaction commits."""
    expires = None if expires_at is None else expires_at.timestamp()
    send_after_commit([(token_group(token_id), {"type": "socket.expiry", "expires_at": expires})])


class AuthenticatedSocketConsumer(AsyncJsonWebsocketConsumer):
    """Behind accounts.websocket's middleware: `scope["user"]` is authenticated. Subclasses accept in
    `connect` as usual; accepting joins the groups that close the socket, and `self.allowed` turns
    False once it is closing, for handlers that relay frames."""

    allowed = False
    kind = "other"  # what the metrics call these sockets (core.metrics: tracker_websocket_connections{kind})
    counted = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        WEBSOCKETS.labels(cls.kind)  # each kind is reported from the start, at 0

    async def dispatch(self, message):
        # channels closes stale database connections before every handler, a hop to the one database
        # thread: a frame to 500 viewers queued 500 hops there, ahead of the requests' own queries. These
        # handlers reach the database only through database_sync_to_async, which closes them itself.
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def websocket_connect(self, message):
        self.user, self.token = self.scope["user"], self.scope["api_token"]
        # A browser's: the session it was opened with (checked at the handshake, as Django checks a request).
        self.session_key = self.scope["session"].session_key if self.token is None else None
        self.expiry = None
        self.refused = False
        await super().websocket_connect(message)

    def access_groups(self) -> list[str]:
        """The groups whose `socket.revoke` closes this socket; subclasses add their own."""
        groups = [user_sockets_group(self.user.pk)]
        if self.token is not None:
            groups.append(token_group(self.token.pk))
        if self.session_key is not None:
            groups += [session_group(self.session_key), user_session_sockets_group(self.user.pk)]
        return groups

    async def accept(self, subprotocol=None, headers=None):
        for group in self.access_groups():
            self.groups.append(group)  # left again on disconnect
            await self.channel_layer.group_add(group, self.channel_name)
        self.allowed = True
        if self.token is not None:
            self.schedule_expiry(self.token.expires_at and self.token.expires_at.timestamp())
        AccessWatch.of_this_loop().add(self)
        await super().accept(subprotocol, headers)
        WEBSOCKETS.labels(self.kind).inc()
        self.counted = True

    async def websocket_disconnect(self, message):
        self.schedule_expiry(None)
        AccessWatch.of_this_loop().discard(self)
        if self.counted:
            self.counted = False
            WEBSOCKETS.labels(self.kind).dec()
        await super().websocket_disconnect(message)

    async def send_json(self, content, close=False):
        BROADCAST_FRAMES.labels(self.kind).inc()
        await super().send_json(content, close)

    @classmethod
    def without_access(cls, sockets: list["AuthenticatedSocketConsumer"]) -> list["AuthenticatedSocketConsumer"]:
        """Of these open sockets of this class, those whose access has ended (a token no longer usable, a
        session no longer the user's, a user deactivated); subclasses add their own rules. Run in a
        database thread, a few queries for all."""
        token_ids = {socket.token.pk for socket in sockets if socket.token is not None}
        usable = set(ApiToken.objects.usable().filter(any_of("pk", token_ids)).values_list("pk", flat=True))
        active = {user.pk: user for user in User.objects.filter(
            any_of("pk", {socket.user.pk for socket in sockets}), is_active=True).only("pk", "password")}
        sessions = session_logins({socket.session_key for socket in sockets if socket.session_key is not None})

        def ended(socket) -> bool:
            if socket.user.pk not in active:
                return True
            if socket.token is not None:
                return socket.token.pk not in usable
            return not is_login_of(sessions.get(socket.session_key), active[socket.user.pk])

        return [socket for socket in sockets if ended(socket)]

    def schedule_expiry(self, expires_at: float | None) -> None:
        if self.expiry is not None:
            self.expiry.cancel()
            self.expiry = None
        if expires_at is not None:
            self.expiry = asyncio.ensure_future(self.close_at(expires_at))

    async def close_at(self, expires_at: float) -> None:
        await asyncio.sleep(max(0.0, expires_at - time.time()))
        await self.lose_access()

    async def lose_access(self):
        if self.allowed:
            self.allowed = False
            await self.close(code=ACCESS_LOST)

    async def socket_revoke(self, message):
        await self.lose_access()

    async def socket_expiry(self, message):
        if self.allowed:
            self.schedule_expiry(message["expires_at"])

    async def receive(self, text_data=None, bytes_data=None, **kwargs):
        if self.refused:
            return  # frames already in flight after the close: logged once
        limit = settings.WEBSOCKET_MAX_FRAME_BYTES
        if bytes_data is not None:
            await self.refuse(BAD_FRAME, "binary frame")
        elif len(text_data) > limit or len(text_data.encode()) > limit:
            await self.refuse(FRAME_TOO_BIG, f"frame over {limit} bytes")
        else:
            try:
                content = json.loads(text_data)
            except ValueError:
                await self.refuse(BAD_FRAME, "frame is not JSON")
            except RecursionError:  # arrays or objects nested deeper than the parser goes (1,000 fit in 4 KiB)
                await self.refuse(BAD_FRAME, "frame is JSON nested too deep")
            else:
                await self.receive_json(content)

    async def receive_json(self, content, **kwargs):
        """Clients have nothing to say on these sockets: valid JSON is ignored."""

    async def refuse(self, code: int, reason: str) -> None:
        self.refused = True
        self.allowed = False
        logger.warning("websocket %s of user %s closed with %s: %s",
                       self.scope["path"], self.user.pk, code, reason)
        await self.close(code=code)


def session_logins(keys: set[str]) -> dict[str, dict]:
    """The data of those of these sessions that are live (not expired, not deleted), by key: one query of
    the session table (Django's database-backed sessions, the default)."""
    if not keys:
        return {}
    store = import_module(settings.SESSION_ENGINE).SessionStore
    rows = store.get_model_class().objects.filter(session_key__in=keys, expire_date__gt=timezone.now())
    return {row.session_key: store().decode(row.session_data) for row in rows}


def is_login_of(session: dict | None, user: User) -> bool:
    """Whether a session still logs this user in, as Django judges it on each request: it names the user,
    with the hash of their current password (a password change ends the user's other sessions)."""
    if session is None or session.get(SESSION_KEY) != str(user.pk):
        return False
    stored = session.get(HASH_SESSION_KEY, "")
    # The hashes under SECRET_KEY_FALLBACKS count too, as Django lets them while a key is rotated.
    return any(constant_time_compare(stored, current)
               for current in [user.get_session_auth_hash(), *user.get_session_auth_fallback_hash()])


class AccessWatch(Periodic):
    """The open sockets of one event loop (one server process), rechecked together every
    ACCESS_RECHECK_SECONDS while there are any: each consumer class judges its own sockets at once
    (`without_access`), so the cost is a few queries per period, not a query per socket."""

    def period(self) -> float:
        return ACCESS_RECHECK_SECONDS

    async def tick(self) -> None:
        by_class = defaultdict(list)
        for socket in self.items:
            if socket.allowed:
                by_class[type(socket)].append(socket)
        for consumer_class, sockets in by_class.items():
            for socket in await database_sync_to_async(consumer_class.without_access)(sockets):
                await socket.lose_access()
