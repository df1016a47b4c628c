"""Conditional requests (RFC 9110): an `ETag` on a representation, `If-None-Match` answered 304 when the client
holds it already, `If-Match` refused with 412 when the resource changed since the client read it."""

import hashlib
from collections.abc import Callable
from typing import Any

import orjson
from django.db import transaction
from django.utils.http import parse_etags, quote_etag
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework import status
from rest_framework.exceptions import APIException
from rest_framework.response import Response


class PreconditionFailed(APIException):
    status_code = status.HTTP_412_PRECONDITION_FAILED
    default_detail = "the resource changed since that ETag: read it again"


def etag_of(*parts) -> str:
    """A strong ETag for a representation, or for what it is made of (anything orjson encodes)."""
    return quote_etag(hashlib.blake2b(orjson.dumps(parts, option=orjson.OPT_NON_STR_KEYS), digest_size=16).hexdigest())


def _weak_match(etag: str, header: str) -> bool:
    """If-None-Match compares weakly: W/"x" matches "x"."""
    tags = parse_etags(header)
    return "*" in tags or etag.removeprefix("W/") in {tag.removeprefix("W/") for tag in tags}


def not_modified(request, etag: str) -> Response | None:
    """304 with no body when the client's If-None-Match holds `etag` already, else None."""
    header = request.headers.get("If-None-Match")
    if header is not None and _weak_match(etag, header):
        return Response(status=status.HTTP_304_NOT_MODIFIED, headers={"ETag": etag})
    return None


def with_etag(request, data: dict, etag: str) -> Response:
    """`data` with its ETag, or 304 with no body when the client holds it already."""
    return not_modified(request, etag) or Response(data, headers={"ETag": etag})


def require_current(request, etag: str) -> None:
    """Refuse the write (412) when the request's If-Match names none of `etag`, the resource's ETag as the write
    locked it. Strong comparison: a weak ETag never matches."""
    header = request.headers.get("If-Match")
    if header is not None:
        tags = parse_etags(header)
        if "*" not in tags and etag not in tags:
            raise PreconditionFailed()


def precondition(request, etag_now: Callable[..., str]) -> Callable[..., None] | None:
    """For a write's service, from the request's If-Match (None without one): called with the resource as the
    write locked it, it refuses the write (412) unless the resource's ETag is still one the client sent."""
    if "If-Match" not in request.headers:
        return None
    return lambda *resource: require_current(request, etag_now(*resource))


def conditional_write(request, etag_now: Callable[..., str], write: Callable[..., Any]) -> tuple[Any, str]:
    """`write(check)` (a service, `check` its precondition from the request's If-Match), and the written
    resource with its ETag. The ETag is computed before commit, while the write's locks still hold: after
    commit another write could land between the two reads, and the ETag would describe neither version."""
    with transaction.atomic():
        resource = write(precondition(request, etag_now))
        return resource, etag_now(resource)


IF_NONE_MATCH = OpenApiParameter("If-None-Match", str, OpenApiParameter.HEADER,
                                 description="An ETag this resource answered: 304 with no body while it is current")
IF_MATCH = OpenApiParameter("If-Match", str, OpenApiParameter.HEADER,
                            description="The ETag the change is based on: 412 and nothing changes if it is stale")
ETAG = OpenApiParameter("ETag", str, OpenApiParameter.HEADER, response=[200],
                        description="The representation's version, for If-None-Match and If-Match")
NOT_MODIFIED = {304: OpenApiResponse(description="Unchanged since the ETag in If-None-Match: no body")}
