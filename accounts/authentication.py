import hmac

from rest_framework import authentication, exceptions

from config.ratelimit import charge_token
from core.queries import PreparedLookup

from . import services
from .models import ApiToken
from .services import BEARER


class BearerTokenAuthentication(authentication.BaseAuthentication):
    """`Authorization: Bearer <64 hex>`, the only way into the API."""

    keyword = "Bearer"

    def authenticate(self, request):
        header = request.META.get("HTTP_AUTHORIZATION")
        if header is None:
            return None  # DRF answers 401 through authenticate_header
        match = BEARER.fullmatch(header.strip())
        if match is None:
            raise exceptions.AuthenticationFailed("invalid Authorization header: expected Bearer and a 64-hex token")
        token = authenticate_token(match.group(1))
        if token is None:
            raise exceptions.AuthenticationFailed("invalid, expired or revoked token")
        charge_token(request._request, token)
        services.record_token_use(token=token)
        return token.user, token

    def authenticate_header(self, request):
        return self.keyword


_token_with_user = PreparedLookup(ApiToken, lambda tokens, digest: tokens.filter(digest=digest), related=("user",))


def authenticate_token(plain: str) -> ApiToken | None:
    """The usable token whose secret is `plain`, or None (also used by the websocket handshake)."""
    digest = services.token_digest(plain)
    # The usability rules are checked on the row rather than compiled into the query: every API request
    # runs this.
    token = _token_with_user(digest=digest)
    if token is None or not hmac.compare_digest(token.digest, digest) or not token.is_usable:
        return None
    return token
