"""The API reference is tested, not hoped for: every answer the suite receives through an API client is
checked against the live OpenAPI schema (status declared, body of the declared shape), so a response that
drifts from the reference fails the test that caused it."""

import functools

from django.core.exceptions import SuspiciousOperation
from drf_spectacular.generators import SchemaGenerator
from openapi_core import OpenAPI
from openapi_core.contrib.django import DjangoOpenAPIRequest, DjangoOpenAPIResponse
from openapi_core.templating.paths.exceptions import OperationNotFound, PathNotFound
from rest_framework.test import APIClient


class AnsweredRequest(DjangoOpenAPIRequest):
    """The request as far as a response check needs it: its route and method, not its (consumed) body."""

    @property
    def body(self) -> bytes:
        return b""


@functools.cache
def schema() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)


@functools.cache
def openapi() -> OpenAPI:
    return OpenAPI.from_dict(schema())


def declared_media_types(request, status: int) -> list[str]:
    operation = schema()["paths"][AnsweredRequest(request).path_pattern][request.method.lower()]
    return list(operation["responses"][str(status)].get("content", {}))


def check_media_type(request, response) -> None:
    """A file or CSV answer: its status and media type must be declared; its bytes are the test's to check."""
    media_type = response["Content-Type"].split(";")[0]
    declared = declared_media_types(request, response.status_code)
    assert media_type in declared, (
        f"{request.method} {request.path} → {response.status_code} {media_type} is not declared: {declared}")


def check_not_modified_is_declared(request) -> None:
    """A 304 has no body: only its status must be in the reference."""
    operation = schema()["paths"][AnsweredRequest(request).path_pattern][request.method.lower()]
    assert "304" in operation["responses"], f"{request.method} {request.path} → 304 is not declared"


def check_against_schema(response) -> None:
    request = response.wsgi_request
    if request.resolver_match is None or response.status_code == 400 and not is_readable(request):
        return  # refused before any route: a host not allowed, a query string too long to read
    if not request.path.startswith("/api/v1/") or request.path.startswith("/api/v1/schema/"):
        return
    if response.status_code >= 500:
        return  # a real server error fails its own test
    if response.status_code == 304:
        return check_not_modified_is_declared(request)
    if response.streaming or not response["Content-Type"].startswith("application/json"):
        return check_media_type(request, response)
    try:
        openapi().validate_response(AnsweredRequest(request), DjangoOpenAPIResponse(response))
    except PathNotFound:
        assert response.status_code == 404, f"{request.path} is answered but not in the API reference"
    except OperationNotFound:
        assert response.status_code in (401, 405), f"{request.method} {request.path} is not in the API reference"
    except Exception as error:  # openapi-core's validation errors: say what did not match
        raise AssertionError(f"{request.method} {request.path} → {response.status_code} contradicts the API "
                             f"reference: {reasons(error)}\n{response.content[:300]!r}") from error


def reasons(error: Exception) -> str:
    causes = getattr(error.__cause__, "schema_errors", None) or getattr(error, "schema_errors", None)
    if causes:
        return "; ".join(f"{'/'.join(map(str, cause.absolute_path))}: {cause.message[:200]}" for cause in causes)
    return f"{type(error).__name__}: {error}"


def is_readable(request) -> bool:
    try:
        request.get_host(), request.GET
    except SuspiciousOperation:
        return False
    return True


class SchemaCheckedClient(APIClient):
    def request(self, **kwargs):
        response = super().request(**kwargs)
        check_against_schema(response)
        return response
