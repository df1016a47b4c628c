"""Who opened a websocket: `scope["user"]` and `scope["api_token"]`, decided once, at the handshake;
a handshake without a usable identity, or over the rate limits, is refused here, before any consumer or
channel exists.

Two ways in, as over HTTP: `Authorization: Bearer <token>` for API clients, or the Django
session of a logged-in browser. Browsers attach cookies to a websocket opened by any site,
so the session counts only when the Origin header is this service's own origin (accounts/origin.py:
no cross-site websocket hijacking; a browser always sends Origin on a websocket, so none means no
session). A bearer token is never attached by a browser on its own, so it needs no Origin check.
"""

import json

from asgiref.sync import sync_to_async
from channels.auth import get_user
from channels.db import database_sync_to_async
from channels.middleware import BaseMiddleware
from channels.sessions import SessionMiddlewareStack
from django.conf import settings
from django.contrib.auth.models import AnonymousUser

from core.api.busy import BUSY, RETRY_SOON
from core.api.errors import error_body
from core.cache import CountersUnavailable
from core.ratelimit import Quota, address_bucket
from core.sockets import OpenSockets

from . import services
from .authentication import authenticate_token
from .models import ApiToken, User
from .origin import is_own_origin
from .ratelimit import LIMITED, charge_address, charge_credential
from .services import BEARER

TOO_MANY_SOCKETS = "too many open websockets: at most {} per user"
TOO_MANY_SOCKETS_CODE = 4429  # the close code of that refusal where the server cannot answer 429


class WebsocketAuthMiddleware(BaseMiddleware):
    """Every handshake counts against the API's rate limits (accounts/ratelimit.py), as a request would:
    one that authenticates against its credential and user, any other against its client address. An
    authenticated one then needs room: in its server process (WEB_MAX_WEBSOCKETS, else 503) and among its
    user's open sockets (WS_MAX_PER_USER, else 429), which it holds until it closes (core/sockets.py)."""

    async def __call__(self, scope, receive, send):
        user, token = await handshake_identity(scope)
        try:
            quota = await handshake_quota(scope, user, token)
        except CountersUnavailable:
            return await refuse_handshake(receive, send, scope, 503, BUSY, RETRY_SOON)
        if quota.exceeded:
            return await refuse_handshake(receive, send, scope, 429, LIMITED, quota.headers())
        if not user.is_authenticated:
            return await refuse_handshake(receive, send, scope)
        if OpenSockets.process_is_full():
            return await refuse_handshake(receive, send, scope, 503, BUSY, RETRY_SOON)
        sockets = OpenSockets.of_this_loop()
        try:
            lease = await sockets.open(user.pk)
        except CountersUnavailable:
            return await refuse_handshake(receive, send, scope, 503, BUSY, RETRY_SOON)
        if lease is None:
            return await refuse_handshake(receive, send, scope, 429, TOO_MANY_SOCKETS.format(settings.WS_MAX_PER_USER),
                                          close_code=TOO_MANY_SOCKETS_CODE)
        try:
            return await super().__call__({**scope, "user": user, "api_token": token}, receive, send)
        finally:
            await sockets.close(lease)


def websocket_auth_stack(inner):
    """Cookies and session first, as Channels' AuthMiddlewareStack, then our handshake rule."""
    return SessionMiddlewareStack(WebsocketAuthMiddleware(inner))


async def handshake_identity(scope) -> tuple[User | AnonymousUser, ApiToken | None]:
    headers = handshake_headers(scope)
    authorization = headers.get("authorization")
    if authorization is not None:
        # A bad token is refused outright, never retried as a session: as over HTTP.
        token = await bearer_token(authorization)
        return (token.user, token) if token is not None else (AnonymousUser(), None)
    origin = headers.get("origin")
    if origin is not None and is_own_origin(origin, host=headers.get("host", ""), secure=is_secure(headers, scope)):
        return await get_user(scope), None
    return AnonymousUser(), None


@sync_to_async(thread_sensitive=False)  # a round trip to the shared cache: off the event loop
def handshake_quota(scope, user: User | AnonymousUser, token: ApiToken | None) -> Quota:
    if user.is_authenticated:
        return charge_credential(user, token)
    client = scope.get("client")
    return charge_address(address_bucket(client[0] if client else "unknown"))


async def refuse_handshake(receive, send, scope, status: int = 403, error: str = "",
                           headers: dict[str, str] | None = None, close_code: int | None = None) -> None:
    """Before accept: the server answers HTTP 403; over a limit (429, with Retry-After for a rate limit) or when
    the limit's counters cannot be reached (503), that status and the API's JSON where the server lets the
    application answer a handshake itself (ASGI's websocket.http.response: uvicorn). Elsewhere (daphne) a
    refusal with a `close_code` accepts the socket and closes it at once with that code, so that the client
    still learns why; any other is the server's 403."""
    await receive()  # websocket.connect
    if status != 403 and "websocket.http.response" in scope.get("extensions", {}):
        fields = [(b"content-type", b"application/json")]
        fields += [(name.lower().encode(), value.encode()) for name, value in (headers or {}).items()]
        await send({"type": "websocket.http.response.start", "status": status, "headers": fields})
        return await send({"type": "websocket.http.response.body",
                           "body": json.dumps(error_body(error, status=status)).encode()})
    if close_code is not None:
        await send({"type": "websocket.accept"})
        return await send({"type": "websocket.close", "code": close_code})
    await send({"type": "websocket.close"})


def handshake_headers(scope) -> dict[str, str]:
    return {name.decode("latin1").lower(): value.decode("latin1") for name, value in scope.get("headers", [])}


@database_sync_to_async
def bearer_token(authorization: str) -> ApiToken | None:
    match = BEARER.fullmatch(authorization.strip())
    token = authenticate_token(match.group(1)) if match else None
    if token is not None:
        services.record_token_use(token=token)
    return token


def is_secure(headers: dict[str, str], scope) -> bool:
    """As `HttpRequest.is_secure()`: TLS ends at the proxy, which says so in SECURE_PROXY_SSL_HEADER."""
    if settings.SECURE_PROXY_SSL_HEADER:
        meta_name, secure_value = settings.SECURE_PROXY_SSL_HEADER
        forwarded = headers.get(meta_name.removeprefix("HTTP_").replace("_", "-").lower())
        if forwarded is not None:
            return forwarded.split(",")[0].strip() == secure_value
    return scope.get("scheme") == "wss"
