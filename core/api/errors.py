"""The body of every error answer, whichever layer writes it (the API's exception handler, Django's error handlers,
the body limit, the rate limit, a websocket handshake refused, the health probes): `error`, a message for people,
and `code`, a stable word for programs (docs/api.md, "Errors"). Free of DRF, which the middleware must not import
before its settings."""

from django.http import JsonResponse

# The code of an error answer, by its status; a few refusals carry a more precise one of their own.
CODES = {
    400: "bad_request",
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    409: "conflict",
    412: "precondition_failed",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "validation_failed",
    429: "rate_limited",
    500: "server_error",
    503: "unavailable",
}
IDEMPOTENCY_CONFLICT = "idempotency_conflict"  # 409: a request with the same Idempotency-Key is being served
ALL_CODES = sorted({*CODES.values(), IDEMPOTENCY_CONFLICT})


def code_for(status: int) -> str:
    return CODES.get(status) or ("server_error" if status >= 500 else "bad_request")


def error_body(message: str, *, status: int, code: str | None = None, field: str | None = None, **extra) -> dict:
    body = {"error": message, "code": code or code_for(status)}
    if field:
        body["field"] = field
    body.update(extra)
    return body


def error_response(message: str, *, status: int, headers: dict[str, str] | None = None, **details) -> JsonResponse:
    return JsonResponse(error_body(message, status=status, **details), status=status, headers=headers)
