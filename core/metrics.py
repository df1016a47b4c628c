"""Prometheus metrics (decisions.md, "Operations"): what the service counts, and `GET /metrics`.

Under the Procfile's gunicorn, every worker process writes its samples to files in
PROMETHEUS_MULTIPROC_DIR (config/gunicorn.py prepares it) and a scrape, answered by whichever worker
receives it, merges them all with prometheus_client's own multiprocess collector: one view across the workers
(and the `worker:` process of the machine, which keeps its files in a subdirectory). About 100 ms of CPU for
1,000 route/status series (bench/RESULTS.md, "scrape"): at a scrape every 15 s, under 1% of a core. Without that
variable (daphne, tests) the samples are the process's own.

`/metrics` is answered in the ASGI stack (config/application.py), before Django: no host check, HTTPS redirect,
session or rate limit applies, and a scrape costs no database work. It needs `Authorization: Bearer
<METRICS_TOKEN>` when that is set (else 401) and a client address within METRICS_ALLOWED_IPS when that
is set (else 404); with neither set the route does not exist (404 from the application).
"""

import hmac
import ipaddress
from pathlib import Path
from time import perf_counter

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.urls import Resolver404, resolve
from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.multiprocess import MultiProcessCollector

PATH = "/metrics"
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNMATCHED = "unmatched"  # a path no route matches

REQUESTS = Counter("tracker_http_requests", "HTTP requests answered by the application",
                   ["method", "route", "status"])
REQUEST_DURATION = Histogram("tracker_http_request_duration_seconds",
                             "Time from a request's arrival in the application to its answer's headers",
                             # Few buckets: with one histogram per route and method, they are most of what a
                             # scrape reads and writes (bench/RESULTS.md, the scrape figure).
                             ["method", "route"], buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5))
RATE_LIMITED = Counter("tracker_rate_limited", "Requests refused by a rate limit (429)")
WEBSOCKETS = Gauge("tracker_websocket_connections", "Open websockets", ["kind"], multiprocess_mode="livesum")
BROADCAST_FRAMES = Counter("tracker_broadcast_frames", "Frames sent to websocket clients", ["kind"])
DB_POOL_CONNECTIONS = Gauge("tracker_db_pool_connections", "PostgreSQL connections of the processes' pools",
                            ["state"], multiprocess_mode="livesum")
DB_POOL_WAITING = Gauge("tracker_db_pool_waiting_requests", "Requests waiting for a pooled connection",
                        multiprocess_mode="livesum")
WEBHOOK_DELIVERIES = Counter("tracker_webhook_deliveries", "Webhook delivery attempts, by their outcome", ["outcome"])
EMAILS = Counter("tracker_emails", "E-mail sending attempts, by kind (notification, digest, invitation, ...) and "
                 "outcome (sent; retried later; failed: given up after the last retry)", ["kind", "outcome"])
# Measured by the webhook sweep (every WEBHOOK_SWEEP_SECONDS, in each process that sweeps): the latest measure wins.
WEBHOOK_BACKLOG = Gauge("tracker_webhook_backlog", "Webhook deliveries not yet delivered nor failed (pending or "
                        "retrying)", multiprocess_mode="mostrecent")
WEBHOOK_BACKLOG_OLDEST = Gauge("tracker_webhook_backlog_oldest_seconds", "Age of the oldest open webhook delivery "
                               "(0 without any)", multiprocess_mode="mostrecent")

# Where a `worker:` process (Celery) of this machine keeps its samples, under PROMETHEUS_MULTIPROC_DIR (the
# Procfile's line points it there): apart from the web workers' files, which the web server empties when it
# starts (config/gunicorn.py).
WORKER_SAMPLES = "worker"


def route_of(request) -> str:
    """The route template the path resolved to ("api/v1/projects/<id:project_id>"), never the path itself:
    one series per route, however many objects there are."""
    match = request.resolver_match
    if match is None:  # answered before routing (a rate limit, a static file): the route it was meant for
        try:
            match = resolve(request.path_info)
        except Resolver404:
            return UNMATCHED
    return match.route or UNMATCHED


class RequestMetricsMiddleware:
    """Django middleware, outermost: counts and times every answer the application gives."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = perf_counter()
        response = self.get_response(request)
        method = request.method if request.method in METHODS else "other"
        route = route_of(request)
        REQUESTS.labels(method, route, str(response.status_code)).inc()
        REQUEST_DURATION.labels(method, route).observe(perf_counter() - started)
        if response.status_code == 429:
            RATE_LIMITED.inc()
        record_pool_usage()
        return response


def record_pool_usage() -> None:
    """This process's share of the pool gauges, as the request leaves (its connection back in the pool)."""
    pool = getattr(connections[DEFAULT_DB_ALIAS], "pool", None)
    if pool is None:  # SQLite, or PostgreSQL without a pool
        return
    stats = pool.get_stats()
    DB_POOL_CONNECTIONS.labels("idle").set(stats["pool_available"])
    DB_POOL_CONNECTIONS.labels("in_use").set(stats["pool_size"] - stats["pool_available"])
    DB_POOL_WAITING.set(stats.get("requests_waiting", 0))


class MachineCollector:
    """The samples of every process of this machine, merged by prometheus_client (MultiProcessCollector.merge):
    the web workers' files, and a `worker:` process's beside them under the same PROMETHEUS_MULTIPROC_DIR."""

    def __init__(self, directory: Path):
        self.directory = directory

    def collect(self):
        files = [*self.directory.glob("*.db"), *(self.directory / WORKER_SAMPLES).glob("*.db")]
        return MultiProcessCollector.merge([str(path) for path in files], accumulate=True)


def exposition() -> bytes:
    """Every sample in the text format: in multiprocess mode, those of every process of this machine."""
    if not settings.PROMETHEUS_MULTIPROC_DIR:
        return generate_latest(REGISTRY)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(MachineCollector(Path(settings.PROMETHEUS_MULTIPROC_DIR)))
    return generate_latest(registry)


def client_allowed(scope) -> bool:
    networks = settings.METRICS_ALLOWED_IPS
    if not networks:
        return True
    try:
        address = ipaddress.ip_address((scope.get("client") or ("",))[0])
    except ValueError:
        return False
    return any(address in network for network in networks)


def token_given(scope) -> bool:
    expected = settings.METRICS_TOKEN
    if not expected:
        return True
    given = next((value for name, value in scope["headers"] if name.lower() == b"authorization"), b"")
    return hmac.compare_digest(given, f"Bearer {expected}".encode())


async def answer(send, status: int, body: bytes, content_type: bytes = b"text/plain; charset=utf-8",
                 extra: tuple = ()) -> None:
    headers = [(b"content-type", content_type), (b"content-length", str(len(body)).encode()),
               (b"cache-control", b"no-store"), *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class MetricsEndpoint:
    """ASGI middleware answering GET /metrics; every other request goes on to `app`."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"] != PATH or not settings.METRICS_ENABLED:
            return await self.app(scope, receive, send)
        if not client_allowed(scope):
            return await answer(send, 404, b"not found")
        if not token_given(scope):
            return await answer(send, 401, b"a valid metrics token is required",
                                extra=((b"www-authenticate", b'Bearer realm="metrics"'),))
        if scope["method"] != "GET":
            return await answer(send, 405, b"method not allowed", extra=((b"allow", b"GET"),))
        # Off the event loop: reading every worker's samples takes milliseconds the sockets should not wait.
        body = await sync_to_async(exposition, thread_sensitive=False)()
        await answer(send, 200, body, CONTENT_TYPE_PLAIN_0_0_4.encode())
