"""OpenAPI: how drf-spectacular describes this API, and the helpers views use to declare their answers.

Every answer of the API is a JSON object (a list comes in an envelope such as `{"projects": [...]}`),
every `ts` value a `YYYY-MM-DD HH:MM:SS` string in UTC, and every error `{"error": ..., "code": ...}`: the schema
class, the field extension and the hook below make the reference say so once, for every view.
"""

import re

from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import build_basic_type, is_list_serializer
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, inline_serializer
from rest_framework import serializers

from core.api.errors import ALL_CODES

ERROR_MEANINGS = {
    400: "A request that cannot be read: malformed JSON, a body that is not a JSON object, too many parameters, "
         "a malformed `Idempotency-Key`",
    401: "Missing, invalid, expired or revoked API token",
    403: "Your role in the project is too low for this action",
    404: "Not found, or not reachable with this token",
    409: "A request with the same `Idempotency-Key` is still being served: retry after `Retry-After` seconds",
    413: "The request body is larger than any legal request",
    412: "The resource changed since the ETag sent in `If-Match`: nothing was changed",
    415: "The body is not of a media type this operation accepts",
    422: "Validation failed; `error` names the offending field or query parameter (or the `Idempotency-Key` was "
         "used with another request)",
    429: "Too many requests: wait as long as `Retry-After` says",
}
TIMESTAMP = {
    "type": "string", "pattern": r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$", "example": "2026-11-23 11:12:24",
    "description": "UTC, `YYYY-MM-DD HH:MM:SS`",
}
# The area an operation is listed under, by its path: the first pattern that matches.
AREAS = [
    (r"^/api/v1/me\b", "account"),
    (r"/time-entries|/time-report", "time tracking"),
    (r"/notifications", "notifications"),
    (r"/docs\b", "docs"),
    (r"/attachments\b", "attachments"),
    (r"/checklist\b", "checklist"),
    (r"/blockers\b", "blockers"),
    (r"/reactions/|/comments$", "comments"),
    (r"/tags\b", "tags"),
    (r"/events\b", "events"),
    (r"/webhooks\b", "webhooks"),
    (r"/markdown$", "markdown"),
    (r"/imports$|/exports$|/jobs/", "transfers"),
    (r"/tickets|/archived-tickets", "tickets"),
    (r"", "projects"),
]


class ErrorOutput(serializers.Serializer):
    error = serializers.CharField(help_text="What went wrong, naming the field at fault")
    code = serializers.ChoiceField(choices=ALL_CODES, help_text="What went wrong, as a stable word for programs "
                                                                "(docs: Errors)")
    field = serializers.CharField(required=False, help_text="The offending field, on some 422 answers")


def error_responses(*codes: int) -> dict[int, OpenApiResponse]:
    return {code: OpenApiResponse(ErrorOutput, description=ERROR_MEANINGS[code]) for code in codes}


def envelope(name: str, **fields) -> serializers.Serializer:
    """A named response object; `ok=True` stands for the constant `true` flag of write answers."""
    return inline_serializer(
        name, {key: serializers.BooleanField() if value is True else value for key, value in fields.items()}
    )


class ApiAutoSchema(AutoSchema):
    def _is_list_view(self, serializer=None) -> bool:
        # drf-spectacular guesses that a `list` action answers an array; ours answer an envelope object.
        if serializer is None:
            serializer = self.get_response_serializers()
        if isinstance(serializer, dict) and serializer:
            serializer = serializer[min(serializer, key=str)]
        return is_list_serializer(serializer)

    def get_tags(self) -> list[str]:
        return [next(area for pattern, area in AREAS if re.search(pattern, self.path))]

    def get_operation_id(self) -> str:
        # "tickets_move", "docs_folder_create": what a generated client names its function. Views that
        # share an area name what they act on in `schema_noun`.
        noun = getattr(self.view, "schema_noun", None)
        return "_".join(filter(None, [self.get_tags()[0].replace(" ", "_"), noun, self.view.action]))

    def get_summary(self) -> str | None:
        # The first line of the handler's docstring, written for API users ("Move a ticket to a status").
        handler = getattr(self.view, getattr(self.view, "action", "") or "", None)
        doc = (getattr(handler, "__doc__", None) or "").strip()
        return doc.splitlines()[0].rstrip(".") if doc else None

    def get_description(self) -> str:
        # Only what a view says for API users (extend_schema's description), never its docstring,
        # which speaks of the implementation.
        return ""


class TimestampFieldExtension(OpenApiSerializerFieldExtension):
    """Every datetime this API renders is a `ts`: DRF's DATETIME_FORMAT, in UTC."""

    target_class = "rest_framework.fields.DateTimeField"

    def map_serializer_field(self, auto_schema, direction):
        return dict(TIMESTAMP)


# What Python's str.strip(), and so DRF's trimming, removes: every character that str.isspace() accepts,
# spelled alike for JSON Schema's (ECMA-262) regular expressions and Python's.
WHITESPACE = r"\t-\r\u001c-\u0020\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
ANY, SOLID, SPACE = r"[^\u0000]", rf"[^{WHITESPACE}\u0000]", rf"[{WHITESPACE}]"
# A calendar day, YYYY-MM-DD in ASCII digits, as Python's dates know them (years 0001 to 9999; 29 February
# of leap years). DRF reads other scripts' digits too, as strptime does: a lenience, not a promise.
YEAR = r"(?:[1-9][0-9]{3}|0[1-9][0-9]{2}|00[1-9][0-9]|000[1-9])"
LEAP_YEAR = r"(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)"
DAY = (rf"^(?:{YEAR}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
       rf"|02-(?:0[1-9]|1[0-9]|2[0-8]))|{LEAP_YEAR}-02-29)$")


def input_text(field: serializers.CharField) -> dict:
    """What a text field of a request takes, beyond its length: no NUL character (DRF refuses them), and
    unless it may be blank, `min_length` characters (one at least) once trimmed, as a regular expression
    of the raw string."""
    if field.allow_blank or not field.trim_whitespace:
        # Not a pattern: drf-spectacular would add a blank alternative, which "" would then match twice.
        return {"not": {"pattern": r"\u0000"}}
    least = max(field.min_length or 1, 1)
    if least == 1:
        return {"pattern": rf"^{ANY}*{SOLID}{ANY}*$"}
    return {"pattern": rf"^{SPACE}*{SOLID}{ANY}{{{least - 2},}}{SOLID}{SPACE}*$"}


class InputTextFieldExtension(OpenApiSerializerFieldExtension):
    """Request text says what validation takes beyond its length: no NUL, not blank once trimmed."""

    target_class = "rest_framework.fields.CharField"

    def map_serializer_field(self, auto_schema, direction):
        schema = build_basic_type(OpenApiTypes.STR)
        return {**schema, **input_text(self.target)} if direction == "request" else schema


class InputDayFieldExtension(OpenApiSerializerFieldExtension):
    """Request days are `format: date`, which JSON Schema only notes: the pattern makes it a rule."""

    target_class = "rest_framework.fields.DateField"

    def map_serializer_field(self, auto_schema, direction):
        schema = build_basic_type(OpenApiTypes.DATE)
        if direction == "request":
            # The length too: a Python `$` (python-jsonschema's) also matches before a final newline.
            schema.update(pattern=DAY, minLength=10, maxLength=10)
        return schema


DOWNLOAD_HEADERS = {
    "Content-Disposition": "`inline` for raster images and PDF, `attachment` otherwise, with the file's name",
    "X-Content-Type-Options": "`nosniff`: the declared type is the only one a browser may assume",
    "Content-Security-Policy": "A sandbox for every type but PDF: nothing in the file runs or loads",
}


IDEMPOTENCY_KEY = {
    "name": "Idempotency-Key", "in": "header", "required": False,
    "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": r"^[\x20-\x7e]+$"},
    "description": "Any 1 to 255 printable ASCII characters, unique per request you mean (a UUID): a retry with "
                   "the same key, path and body within 24 hours gets the first answer again (with "
                   "`Idempotent-Replayed: true`) and does nothing else",
}
REPLAYED = {"schema": {"type": "string", "enum": ["true"]},
            "description": "`true` on the answer kept for an earlier request with the same `Idempotency-Key`"}
RETRY_AFTER = {"schema": {"type": "string"}, "description": "Seconds to wait before retrying"}


def add_common_errors(result, generator, request, public):
    """Answers every operation can get whatever its view says: 400, 401 and 429, and for a body 413 and 415;
    on every GET, 422 for a query parameter it does not take; on every POST, the Idempotency-Key header with its
    409 and 422 and the header of a replayed answer."""
    error = {"description": "", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorOutput"}}}}
    for item in result["paths"].values():
        for method, operation in item.items():
            responses = operation["responses"]
            codes = [400, 401, 429]
            if "requestBody" in operation:
                codes += [413, 415]
            if method == "get":
                codes.append(422)
            if method == "post":
                codes += [409, 422]
            for code in codes:
                responses.setdefault(str(code), {**error, "description": ERROR_MEANINGS[code]})
            if "application/octet-stream" in responses.get("200", {}).get("content", {}):
                responses["200"]["headers"] = {
                    name: {"schema": {"type": "string"}, "description": meaning}
                    for name, meaning in DOWNLOAD_HEADERS.items()}
            if method == "post":
                declare_idempotency(operation)
            operation["responses"] = dict(sorted(responses.items()))
    return result


# Answered before a key is claimed (no caller, over the rate limit, the key busy), so never a kept answer.
NEVER_REPLAYED = {"401", "409", "429"}


def declare_idempotency(operation: dict) -> None:
    operation.setdefault("parameters", []).append(IDEMPOTENCY_KEY)
    for code, response in operation["responses"].items():
        if code not in NEVER_REPLAYED:
            response["headers"] = {**response.get("headers", {}), "Idempotent-Replayed": REPLAYED}
    conflict = operation["responses"]["409"]
    # An operation's own 409 (a clash with what exists) is a kept answer, replayed as any other.
    replayed = {} if conflict["description"] == ERROR_MEANINGS[409] else {"Idempotent-Replayed": REPLAYED}
    conflict["headers"] = {"Retry-After": RETRY_AFTER, **replayed}
