"""Whether a request comes from this service's own pages: the rule by which a browser's cookies count.

Browsers attach cookies to requests that other sites make (a form, a websocket, a navigation); the
session counts only when the request is from this service's own origin, as Django's CSRF check judges
an Origin header: the scheme and Host of the request (the Host being an allowed one), or one of
CSRF_TRUSTED_ORIGINS.
"""

from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.http.request import split_domain_port, validate_host


def is_own_origin(origin: str, *, host: str, secure: bool) -> bool:
    if origin in settings.CSRF_TRUSTED_ORIGINS:
        return True
    domain, _ = split_domain_port(host)
    scheme = "https" if secure else "http"
    return bool(domain) and validate_host(domain, settings.ALLOWED_HOSTS) and origin == f"{scheme}://{host}"


def is_same_origin_request(request) -> bool:
    """An HTTP request (Django's or DRF's): its Origin is ours, or it has none and the browser does not say it
    comes from elsewhere (`Sec-Fetch-Site`; a same-origin GET carries no Origin)."""
    origin = request.headers.get("Origin")
    if origin is None:
        return request.headers.get("Sec-Fetch-Site", "same-origin") in {"same-origin", "none"}
    try:
        host = request.get_host()
    except DisallowedHost:
        return False
    return is_own_origin(origin, host=host, secure=request.is_secure())
