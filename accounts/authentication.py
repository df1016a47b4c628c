import hmac

from rest_framework import authentication, exceptions

from config.ratelimit import admit_token, start_token_charge
from core.queries import PreparedLookup, rows_together

from . import services
from .models import ApiToken
from .services import BEARER


class BearerTokenAuthentication(authentication.BaseAuthentication):
    """`Authorization: Bearer <64 hex>`, the only way into the API.

    One round trip to each store, both under way at once: the token's rate-limit count leaves for Redis
    first (counted by the token's digest), then the token's lookup goes to the database together with the
    reads the view asks for (`reads_with_token(digest)`: reads keyed by the same digest, such as the
    caller's membership; their rows go back to the view as `rows_read_with_token`), and the count is read
    last.
    """

    keyword = "Bearer"

    def authenticate(self, request):
        header = request.META.get("HTTP_AUTHORIZATION")
        if header is None:
            return None  # DRF answers 401 through authenticate_header
        match = BEARER.fullmatch(header.strip())
        if match is None:
            raise exceptions.AuthenticationFailed("invalid Authorization header: expected Bearer and a 64-hex token")
        digest = services.token_digest(match.group(1))
        view = (request.parser_context or {}).get("view")
        reads = view.reads_with_token(digest) if hasattr(view, "reads_with_token") else []
        counted = start_token_charge(digest)
        try:
            token_rows, *read_rows = rows_together(_token_with_user.call(digest=digest), *reads)
        finally:
            quota = counted()
        token = _usable(_token_with_user.instance(token_rows), digest)
        if token is None:
            raise exceptions.AuthenticationFailed("invalid, expired or revoked token")
        admit_token(request._request, quota)
        services.record_token_use(token=token)
        if reads:
            view.rows_read_with_token = read_rows
        return token.user, token

    def authenticate_header(self, request):
        return self.keyword


_token_with_user = PreparedLookup(ApiToken, lambda tokens, digest: tokens.filter(digest=digest), related=("user",))


def authenticate_token(plain: str) -> ApiToken | None:
    """The usable token whose secret is `plain`, or None (the websocket handshake's check)."""
    digest = services.token_digest(plain)
    return _usable(_token_with_user(digest=digest), digest)


def _usable(token: ApiToken | None, digest: str) -> ApiToken | None:
    # The usability rules are checked on the row rather than compiled into the query: every API request
    # runs this.
    if token is None or not hmac.compare_digest(token.digest, digest) or not token.is_usable:
        return None
    return token
