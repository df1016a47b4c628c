"""Who is calling the API: a bearer token, or the session of a browser on this service's own pages.

Authentication only authenticates: the token's lookup is its one read. What a view loads for its
handler (membership, object) the base view loads; rate limits are counted by the throttle
(accounts/ratelimit.py).
"""

import hmac

from rest_framework import authentication, exceptions

from core.queries import PreparedLookup

from . import services
from .models import ApiToken
from .origin import is_same_origin_request
from .services import BEARER


class BearerTokenAuthentication(authentication.BaseAuthentication):
    """`Authorization: Bearer <64 hex>`, for API clients. A bad token is refused (401), never retried as a
    session."""

    keyword = "Bearer"

    def authenticate(self, request):
        header = request.META.get("HTTP_AUTHORIZATION")
        if header is None:
            return None
        match = BEARER.fullmatch(header.strip())
        if match is None:
            raise exceptions.AuthenticationFailed("invalid Authorization header: expected Bearer and a 64-hex token")
        token = authenticate_token(match.group(1))
        if token is None:
            raise exceptions.AuthenticationFailed("invalid, expired or revoked token")
        services.record_token_use(token=token)
        return token.user, token

    def authenticate_header(self, request):
        return self.keyword


class SameOriginSessionAuthentication(authentication.SessionAuthentication):
    """The Django session of a logged-in browser, for the pages that call the API: only from this service's
    own origin (a request from another origin never authenticates by cookie), and DRF checks the CSRF
    token (`X-CSRFToken`) of every write."""

    def authenticate(self, request):
        if not is_same_origin_request(request):
            return None
        return super().authenticate(request)


# Every API request with a token makes this lookup: compiled once.
_token_with_user = PreparedLookup(ApiToken, lambda tokens, digest: tokens.filter(digest=digest), related=("user",))


def authenticate_token(plain: str) -> ApiToken | None:
    """The usable token whose secret is `plain`, or None."""
    digest = services.token_digest(plain)
    token = _token_with_user(digest=digest)
    # The usability rules are checked on the row rather than compiled into the query: every API request
    # runs this.
    if token is None or not hmac.compare_digest(token.digest, digest) or not token.is_usable:
        return None
    return token
