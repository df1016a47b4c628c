"""Django-level error handlers: JSON for anything under /api/, Django's pages elsewhere."""

from django.core.exceptions import SuspiciousOperation
from django.views import csrf, defaults

from .errors import error_response
from .exceptions import refusal
from .paths import is_api


def not_found(request, exception=None):
    if is_api(request):
        return error_response("not found", status=404)
    return defaults.page_not_found(request, exception)


def server_error(request):
    if is_api(request):
        return error_response("internal server error", status=500)
    return defaults.server_error(request)


def bad_request(request, exception=None):
    if is_api(request):
        status, message = refusal(exception) if isinstance(exception, SuspiciousOperation) else (400, "bad request")
        return error_response(message, status=status)
    return defaults.bad_request(request, exception)


def permission_denied(request, exception=None):
    if is_api(request):
        return error_response("permission denied", status=403)
    return defaults.permission_denied(request, exception)


def csrf_failure(request, reason=""):
    """CSRF_FAILURE_VIEW: API views take no session and are exempt, but whatever reaches this under /api/ is JSON."""
    if is_api(request):
        return error_response(f"CSRF check failed: {reason}", status=403)
    return csrf.csrf_failure(request, reason)
