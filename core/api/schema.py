"""OpenAPI: how drf-spectacular describes this API, and the helpers views use to declare their answers.

Every answer of the API is a JSON object (a list comes in an envelope such as `{"projects": [...]}`),
every `ts` value a `YYYY-MM-DD HH:MM:SS` string in UTC, and every error `{"error": ...}`: the schema
class, the field extension and the hook below make the reference say so once, for every view.
"""

import re

from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import is_list_serializer
from drf_spectacular.utils import OpenApiResponse, inline_serializer
from rest_framework import serializers

ERROR_MEANINGS = {
    400: "A request that cannot be read: malformed JSON, a body that is not a JSON object, too many parameters",
    401: "Missing, invalid, expired or revoked API token",
    403: "Your role in the project is too low for this action",
    404: "Not found, or not reachable with this token",
    413: "The request body is larger than any legal request",
    412: "The resource changed since the ETag sent in `If-Match`: nothing was changed",
    415: "The body is not of a media type this operation accepts",
    422: "Validation failed; `error` names the offending field",
    429: "Too many requests: wait as long as `Retry-After` says",
}
TIMESTAMP = {
    "type": "string", "pattern": r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$", "example": "2026-11-23 11:12:24",
    "description": "UTC, `YYYY-MM-DD HH:MM:SS`",
}
# The area an operation is listed under, by its path: the first pattern that matches.
AREAS = [
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
    (r"/tickets|/archived-tickets", "tickets"),
    (r"", "projects"),
]


class ErrorOutput(serializers.Serializer):
    error = serializers.CharField(help_text="What went wrong, naming the field at fault")
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


DOWNLOAD_HEADERS = {
    "Content-Disposition": "`inline` for raster images and PDF, `attachment` otherwise, with the file's name",
    "X-Content-Type-Options": "`nosniff`: the declared type is the only one a browser may assume",
    "Content-Security-Policy": "A sandbox for every type but PDF: nothing in the file runs or loads",
}


def add_common_errors(result, generator, request, public):
    """Answers every operation can get whatever its view says: 400, 401 and 429, and for a body 413 and 415."""
    error = {"description": "", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorOutput"}}}}
    for item in result["paths"].values():
        for operation in item.values():
            responses = operation["responses"]
            codes = [400, 401, 429]
            if "requestBody" in operation:
                codes += [413, 415]
            for code in codes:
                responses.setdefault(str(code), {**error, "description": ERROR_MEANINGS[code]})
            if "application/octet-stream" in responses.get("200", {}).get("content", {}):
                responses["200"]["headers"] = {
                    name: {"schema": {"type": "string"}, "description": meaning}
                    for name, meaning in DOWNLOAD_HEADERS.items()}
            operation["responses"] = dict(sorted(responses.items()))
    return result
