"""Probes for a load balancer or an orchestrator: /healthz (the process serves) and /readyz (what it needs
answers: the database, Redis when configured, the bucket when files live in one). Outside /api/: no token, no
rate limit; cheap enough to be asked every second: each check is one round trip on a connection the process
already keeps (the database's pool, the cache's Redis pool, the storage's S3 client)."""

import logging

from botocore.exceptions import BotoCoreError, ClientError
from django.conf import settings
from django.core.files.storage import default_storage
from django.db import DatabaseError, connection
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django_redis import get_redis_connection
from redis import RedisError

from core.api.errors import error_body, error_response

logger = logging.getLogger(__name__)

SAFE_METHODS = ("GET", "HEAD")


def probe(view):
    """A probe answers GET and HEAD, never cached; any other method: 405 in JSON."""

    @never_cache
    def answered(request):
        if request.method not in SAFE_METHODS:
            return error_response("method not allowed", status=405, headers={"Allow": ", ".join(SAFE_METHODS)})
        return view(request)

    return answered


@probe
def healthz(request):
    return JsonResponse({"status": "ok"})


@probe
def readyz(request):
    checks = {"database": _database()}
    if settings.REDIS_URL:
        checks["redis"] = _redis()
    if bucket_name():
        checks["bucket"] = _bucket()
    failed = [name for name, result in checks.items() if result != "ok"]
    if not failed:
        return JsonResponse({"status": "ok", "checks": checks})
    return JsonResponse({"status": "unavailable", "checks": checks,
                         **error_body(f"not ready: {', '.join(failed)} failed", status=503)}, status=503)


def _database() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError:
        # The reason (a host name, a driver message) goes to the log, not to whoever can reach the probe.
        logger.warning("readyz: the database does not answer", exc_info=True)
        return "failed"
    return "ok"


def _redis() -> str:
    """A PING on the cache's own pool: no connection opened per probe, and the cache's timeout (REDIS_TIMEOUT)."""
    try:
        get_redis_connection("default").ping()
    except (RedisError, OSError):
        logger.warning("readyz: Redis does not answer", exc_info=True)
        return "failed"
    return "ok"


def bucket_name() -> str:
    """The bucket stored files live in, or "" when they live on disk."""
    return getattr(default_storage, "bucket_name", "") or ""


def bucket_problem() -> str | None:
    """Why the bucket cannot be used (it does not exist, the credentials are refused, it does not answer), or None:
    a HEAD of the bucket through the storage's own client."""
    try:
        default_storage.connection.meta.client.head_bucket(Bucket=bucket_name())
    except ClientError as error:
        status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        return {404: "does not exist", 403: "refuses these credentials"}.get(status, f"answered {status}")
    except BotoCoreError as error:
        return f"does not answer ({error})"
    return None


def _bucket() -> str:
    problem = bucket_problem()
    if problem is not None:
        logger.warning("readyz: the bucket %s %s", bucket_name(), problem)
        return "failed"
    return "ok"
