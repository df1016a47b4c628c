"""OpenAPI helpers: the shared error body and small response envelopes."""

from drf_spectacular.utils import OpenApiResponse, inline_serializer
from rest_framework import serializers

ERROR_MEANINGS = {
    400: "Malformed JSON, or a body that is not a JSON object",
    401: "Missing, invalid, expired or revoked API token",
    403: "Your role in the project is too low for this action",
    404: "Not found, or not reachable with this token",
    422: "Validation failed; `error` names the offending field",
}


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
