"""Probes for a load balancer or an orchestrator: /healthz (the process serves) and /readyz (what it needs
answers). Outside /api/: no token, no rate limit; cheap enough to be asked every second."""

import logging

import redis
from django.conf import settings
from django.db import DatabaseError, connection
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

logger = logging.getLogger(__name__)

# A probe must answer within the prober's own timeout (Kubernetes: 1 s), even when Redis hangs.
REDIS_TIMEOUT_SECONDS = 0.5


@never_cache
@require_safe
def healthz(request):
    return JsonResponse({"status": "ok"})


@never_cache
@require_safe
def readyz(request):
    checks = {"database": _database()}
    if settings.REDIS_URL:
        checks["redis"] = _redis(settings.REDIS_URL)
    ready = all(result == "ok" for result in checks.values())
    return JsonResponse({"status": "ok" if ready else "unavailable", "checks": checks}, status=200 if ready else 503)


def _database() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError:
        # The reason (a host name, a driver message) goes to the log, not to whoever can reach the probe.
        logger.warning("readyz: the database does not answer", exc_info=True)
        return "failed"
    return "ok"


def _redis(url: str) -> str:
    # A connection of its own with a short timeout: the shared pool's clients wait as long as Redis takes.
    client = redis.Redis.from_url(url, socket_timeout=REDIS_TIMEOUT_SECONDS,
                                  socket_connect_timeout=REDIS_TIMEOUT_SECONDS)
    try:
        client.ping()
    except (redis.RedisError, OSError):
        logger.warning("readyz: Redis does not answer", exc_info=True)
        return "failed"
    finally:
        client.close()
    return "ok"
