"""Every API error is rendered here, as JSON with an `error` message and its `code` (core/api/errors.py)."""

import logging

from django.conf import settings
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation, TooManyFieldsSent, TooManyFilesSent
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import OperationalError
from django.http import Http404
from psycopg_pool import PoolTimeout
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.serializers import as_serializer_error
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from core.api.busy import BUSY, RETRY_SOON
from core.api.errors import error_body
from core.cache import CountersUnavailable
from core.errors import Conflict, RuleViolation, Unavailable

logger = logging.getLogger("core.api")


def first_error(detail, path: tuple = ()) -> tuple[str, str | None]:
    """The first message of a DRF error tree, worded to name its field: ("title is required", "title")."""
    if isinstance(detail, dict):
        key, value = next(iter(detail.items()))
        return first_error(value, path if key == "non_field_errors" else (*path, key))
    if isinstance(detail, list):
        item = next((item for item in detail if item), None)
        return first_error(item, path) if item is not None else ("invalid value", None)
    if not path:
        return str(detail), None
    name = "".join(f"[{key}]" if isinstance(key, int) else f".{key}" for key in path).lstrip(".")
    field = str(path[0])
    code = getattr(detail, "code", None)
    if code == "required":
        return f"{name} is required", field
    if code in {"blank", "null"}:
        return f"{name} cannot be empty", field
    return f"{name}: {detail}", field


def api_exception_handler(exc, context):
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(as_serializer_error(exc))
    if isinstance(exc, RuleViolation):
        set_rollback()
        return Response(error_body(exc.message, status=422, field=exc.field, **exc.extra), status=422)
    if isinstance(exc, Conflict):
        set_rollback()
        return Response(error_body(exc.message, status=409, field=exc.field), status=409)
    if isinstance(exc, exceptions.ValidationError):
        set_rollback()
        message, field = first_error(exc.detail)
        return Response(error_body(message, status=422, field=field), status=422)
    if is_pool_timeout(exc):  # every pooled connection stayed busy for the pool's whole timeout
        return busy("No database connection within the pool timeout", context)
    if isinstance(exc, CountersUnavailable):  # the rate limit could not count the request
        return busy("Redis did not answer", context)
    if isinstance(exc, Unavailable):
        return busy(str(exc.__cause__ or exc), context, message=exc.message)
    if isinstance(exc, TooManyFilesSent):
        # Raised where the files of a multipart body are first read: by an upload view, or by the fingerprint of
        # its Idempotency-Key before the view runs (core.idempotency); the same answer either way.
        return Response(error_body(f"files: at most {settings.DATA_UPLOAD_MAX_NUMBER_FILES} files per request",
                                   status=422, field="files"), status=422)
    if isinstance(exc, SuspiciousOperation):
        # Django's own refusals of a request it will not read (too big, too many fields): the client's fault.
        status_code, message = refusal(exc)
        return Response(error_body(message, status=status_code), status=status_code)
    response = drf_exception_handler(exc, context)
    if response is None:
        # Not an API error: an API client still gets JSON, and the trace goes to the log.
        logger.exception("Unhandled error in %s", context.get("view").__class__.__name__, exc_info=exc)
        set_rollback()
        return Response(error_body("internal server error", status=500), status=500)
    # A refusal may name a more precise code than its status does (core.idempotency.KeyInFlight).
    response.data = error_body(_message_of(exc), status=response.status_code, code=getattr(exc, "error_code", None))
    return response


def busy(reason: str, context, message: str = BUSY) -> Response:
    """A 503: whatever the request began is rolled back, and the client may retry."""
    logger.warning("%s in %s", reason, context.get("view").__class__.__name__)
    set_rollback()
    return Response(error_body(message, status=503), status=503, headers=RETRY_SOON)


def is_pool_timeout(exc: Exception) -> bool:
    """Django wraps the driver's errors: psycopg_pool's PoolTimeout arrives as the cause of an
    OperationalError. Any other database error stays a 500."""
    return isinstance(exc, OperationalError) and isinstance(exc.__cause__, PoolTimeout)


def refusal(exc: SuspiciousOperation) -> tuple[int, str]:
    """Status and message for a request Django refuses to read; its own wording names settings, for the log."""
    if isinstance(exc, RequestDataTooBig):
        return 413, "request body too large"
    if isinstance(exc, TooManyFieldsSent | TooManyFilesSent):
        return 400, "too many fields or query parameters"
    return 400, "bad request"


def _message_of(exc) -> str:
    if isinstance(exc, Http404):
        return str(exc) or "not found"
    if isinstance(exc, DjangoPermissionDenied):
        return "permission denied"
    detail = getattr(exc, "detail", None)
    return str(detail) if detail else "error"
