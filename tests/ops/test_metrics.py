"""GET /metrics (decisions.md, "Operations"): who may read it, and what it counts. In this process through
the ASGI application, then from the Procfile's server: one view across its two worker processes."""

import ipaddress
import json

import pytest
from django.db import connection
from prometheus_client import REGISTRY

from tests.config.test_asgi_handler import asgi_get

PROMETHEUS_TEXT = b"text/plain; version=0.0.4; charset=utf-8"


def header(start: dict, name: bytes) -> bytes | None:
    return next((value for key, value in start["headers"] if key.lower() == name), None)


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


@pytest.fixture
def metrics_open_to(settings):
    """Sets who may read /metrics: a token, allowed networks, or both."""

    def configure(token: str = "", networks: tuple[str, ...] = ()):
        settings.METRICS_TOKEN = token
        settings.METRICS_ALLOWED_IPS = [ipaddress.ip_network(network) for network in networks]
        settings.METRICS_ENABLED = bool(token or networks)

    return configure


@pytest.mark.asyncio
class TestWhoMayRead:
    async def test_with_neither_a_token_nor_addresses_it_does_not_exist(self, metrics_open_to):
        metrics_open_to()
        start, body = await asgi_get("/metrics", [(b"authorization", b"Bearer anything")])
        assert start["status"] == 404 and b"tracker_http_requests_total" not in body

    async def test_a_token_is_needed_when_one_is_set(self, metrics_open_to):
        metrics_open_to(token="scrape-secret")
        for headers in ([], [(b"authorization", b"Bearer wrong")], [(b"authorization", b"scrape-secret")]):
            start, body = await asgi_get("/metrics", headers)
            assert (start["status"], body) == (401, b"a valid metrics token is required")
            assert header(start, b"www-authenticate") == b'Bearer realm="metrics"'
        start, body = await asgi_get("/metrics", [(b"authorization", b"Bearer scrape-secret")])
        assert (start["status"], header(start, b"content-type")) == (200, PROMETHEUS_TEXT)
        assert b"# TYPE tracker_http_requests_total counter" in body

    async def test_only_the_allowed_addresses_reach_it(self, metrics_open_to):
        metrics_open_to(networks=("10.0.0.0/8", "::1/128"))
        start, body = await asgi_get("/metrics")  # from 127.0.0.1
        assert (start["status"], body) == (404, b"not found")
        metrics_open_to(networks=("10.0.0.0/8", "127.0.0.0/8"))
        start, _ = await asgi_get("/metrics")
        assert start["status"] == 200

    async def test_with_both_set_both_are_needed(self, metrics_open_to):
        metrics_open_to(token="scrape-secret", networks=("10.0.0.0/8",))
        start, _ = await asgi_get("/metrics", [(b"authorization", b"Bearer scrape-secret")])
        assert start["status"] == 404
        metrics_open_to(token="scrape-secret", networks=("127.0.0.1/32",))
        assert (await asgi_get("/metrics"))[0]["status"] == 401
        assert (await asgi_get("/metrics", [(b"authorization", b"Bearer scrape-secret")]))[0]["status"] == 200

    async def test_it_is_read_only(self, metrics_open_to):
        metrics_open_to(token="scrape-secret")
        start, _ = await asgi_get("/metrics", [(b"authorization", b"Bearer scrape-secret")], method="POST")
        assert (start["status"], header(start, b"allow")) == (405, b"GET")

    async def test_scrapes_are_outside_the_rate_limits(self, metrics_open_to, settings):
        metrics_open_to(token="scrape-secret")
        settings.API_ANON_RATE_LIMIT_PER_MINUTE = 1
        for _ in range(3):
            start, _ = await asgi_get("/metrics", [(b"authorization", b"Bearer scrape-secret")])
            assert start["status"] == 200 and header(start, b"x-ratelimit-limit") is None


@pytest.mark.asyncio
async def test_requests_are_counted_by_route_template_never_by_path(settings):
    route, labels = "api/v1/projects/<id:project_id>/tickets", {"method": "GET", "status": "401"}
    before = sample("tracker_http_requests_total", route=route, **labels)
    timed = sample("tracker_http_request_duration_seconds_count", method="GET", route=route)
    for project_id in (8123, 8124):
        assert (await asgi_get(f"/api/v1/projects/{project_id}/tickets"))[0]["status"] == 401
    assert sample("tracker_http_requests_total", route=route, **labels) == before + 2
    assert sample("tracker_http_request_duration_seconds_count", method="GET", route=route) == timed + 2
    assert not [metric for metric in REGISTRY.collect() for found in metric.samples
                if "8123" in json.dumps(found.labels)]


@pytest.mark.asyncio
async def test_refusals_by_a_rate_limit_are_counted(settings):
    settings.API_ANON_RATE_LIMIT_PER_MINUTE = 1
    before = sample("tracker_rate_limited_total")
    statuses = [(await asgi_get("/api/v1/projects"))[0]["status"] for _ in range(3)]
    assert statuses == [401, 429, 429]
    assert sample("tracker_rate_limited_total") == before + 2
    assert sample("tracker_http_requests_total", method="GET", route="api/v1/projects", status="429") >= 2


@pytest.mark.asyncio
@pytest.mark.parametrize("unusual", ["PROPFIND", "BREW"])
async def test_an_unusual_method_is_counted_as_other(unusual):
    labels = {"method": "other", "route": "api/v1/projects", "status": "401"}
    before = sample("tracker_http_requests_total", **labels)
    await asgi_get("/api/v1/projects", method=unusual)
    assert sample("tracker_http_requests_total", **labels) == before + 1


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the connection pool: PostgreSQL")
def test_the_pool_s_connections_are_reported_as_each_request_leaves(client_for, manager):
    assert client_for(manager).get("/api/v1/projects").status_code == 200
    stats = connection.pool.get_stats()
    idle, in_use = (sample("tracker_db_pool_connections", state=state) for state in ("idle", "in_use"))
    assert (idle + in_use, idle) == (stats["pool_size"], stats["pool_available"])
    assert sample("tracker_db_pool_waiting_requests") == 0


def test_a_worker_process_samples_are_read_beside_the_web_workers(settings, tmp_path):
    """A `worker:` process (Celery) that runs on the machine with the same PROMETHEUS_MULTIPROC_DIR writes to its
    subdirectory, which the web server never empties: a scrape adds its webhook outcomes to the web's."""
    import os
    import subprocess
    import sys

    from core.metrics import WORKER_SAMPLES, exposition
    from tests.realtime.servers import ROOT

    write = ("import sys; from prometheus_client import Counter; "
             "Counter('tracker_webhook_deliveries', '', ['outcome']).labels(sys.argv[1]).inc(int(sys.argv[2]))")
    (tmp_path / WORKER_SAMPLES).mkdir()
    for directory, count in ((tmp_path, 2), (tmp_path / WORKER_SAMPLES, 3)):  # a web worker, then the worker
        subprocess.run([sys.executable, "-c", write, "delivered", str(count)], check=True, cwd=ROOT,
                       env={**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(directory)})
    settings.PROMETHEUS_MULTIPROC_DIR = str(tmp_path)
    assert b'tracker_webhook_deliveries_total{outcome="delivered"} 5.0' in exposition()


def test_the_backlog_measured_last_is_the_one_scraped(settings, tmp_path):
    """The sweep measures the backlog wherever it runs (each worker, or a web process without a broker): the
    latest measure wins, whichever process took it."""
    import os
    import subprocess
    import sys

    from core.metrics import WORKER_SAMPLES, exposition
    from tests.realtime.servers import ROOT

    write = ("import sys; from prometheus_client import Gauge; "
             "Gauge('tracker_webhook_backlog', '', multiprocess_mode='mostrecent').set(int(sys.argv[1]))")
    (tmp_path / WORKER_SAMPLES).mkdir()
    for directory, backlog in ((tmp_path / WORKER_SAMPLES, 40), (tmp_path, 7)):  # a worker, then a web process
        subprocess.run([sys.executable, "-c", write, str(backlog)], check=True, cwd=ROOT,
                       env={**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(directory)})
    settings.PROMETHEUS_MULTIPROC_DIR = str(tmp_path)
    assert [line for line in exposition().decode().splitlines() if line.startswith("tracker_webhook_backlog ")] == [
        "tracker_webhook_backlog 7.0"]


def test_the_procfile_s_worker_line_keeps_its_samples_in_the_subdirectory(tmp_path):
    """Its counters are created when the tasks are imported, before any hook of the worker could move them: the
    line itself points the worker at worker/, where a restart of the web server (which empties the directory's
    own files) leaves them."""
    from core.metrics import WORKER_SAMPLES
    from tests.webhooks.workers import ProcfileWorker

    env = {"PROMETHEUS_MULTIPROC_DIR": str(tmp_path), "CELERY_BROKER_URL": "memory://", "REDIS_URL": "",
           "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}", "WEBHOOK_SWEEP_SECONDS": "3600"}
    with ProcfileWorker(env):
        written = sorted(path.relative_to(tmp_path).parent.name for path in tmp_path.rglob("*.db"))
    assert written and set(written) == {WORKER_SAMPLES}
