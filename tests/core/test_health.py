"""/healthz and /readyz for load balancers and orchestrators: no token, no rate limit, no query beyond the
readiness check's `SELECT 1`, no connection opened per probe; 503 naming the check that failed (the database,
Redis, the bucket files live in)."""

import json
import os
import socket
import subprocess
import sys
import threading

import pytest

from config.settings import cache_config
from tests.realtime.servers import ROOT, free_port

NOT_READY = {"status": "unavailable", "code": "unavailable"}


class TestHealth:
    def test_the_process_serves(self, client, db, django_assert_num_queries):
        with django_assert_num_queries(0):
            response = client.get("/healthz")

        assert (response.status_code, response.json()) == (200, {"status": "ok"})
        assert "no-store" in response["Cache-Control"]
        assert "X-RateLimit-Limit" not in response  # outside the rate limits

    def test_only_reads(self, client):
        for path in ["/healthz", "/readyz"]:
            response = client.post(path)
            assert (response.status_code, response.json(), response["Allow"]) == (
                405, {"error": "method not allowed", "code": "method_not_allowed"}, "GET, HEAD")

    def test_probes_in_plain_http_are_answered_not_redirected(self, client, settings, db):
        settings.SECURE_SSL_REDIRECT = True

        assert [client.get(path).status_code for path in ["/healthz", "/readyz", "/api/v1/projects"]] == [200, 200, 301]


class TestReadiness:
    def test_the_database_answers(self, client, settings, db, django_assert_num_queries):
        settings.REDIS_URL = ""
        with django_assert_num_queries(1):
            response = client.get("/readyz")

        assert (response.status_code, response.json()) == (200, {"status": "ok", "checks": {"database": "ok"}})
        assert "X-RateLimit-Limit" not in response

    @pytest.mark.redis
    @pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs Redis (REDIS_URL)")
    def test_with_redis_configured_redis_answers_too(self, client, settings, db):
        settings.REDIS_URL = os.environ["REDIS_URL"]
        response = client.get("/readyz")

        assert (response.status_code, response.json()) == (200, {
            "status": "ok", "checks": {"database": "ok", "redis": "ok"}})

    @pytest.mark.parametrize("redis", ["refused_redis", "hung_redis"])
    def test_redis_unreachable_is_a_503_naming_it(self, client, settings, db, redis, request):
        request.getfixturevalue(redis)
        settings.REDIS_URL = settings.CACHES["default"]["LOCATION"]
        response = client.get("/readyz")

        assert (response.status_code, response.json()) == (503, {
            **NOT_READY, "error": "not ready: redis failed", "checks": {"database": "ok", "redis": "failed"}})

    @pytest.mark.redis
    @pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs Redis (REDIS_URL)")
    def test_probes_share_one_redis_connection(self, client, settings, db):
        with CountingProxy(os.environ["REDIS_URL"]) as proxy:
            settings.REDIS_URL = proxy.url
            settings.CACHES = cache_config(proxy.url)
            answers = {client.get("/readyz").status_code for _ in range(20)}

        assert (answers, proxy.connections) == ({200}, 1)

    def test_the_bucket_files_live_in_answers(self, client, settings, db, bucket):
        settings.REDIS_URL = ""
        response = client.get("/readyz")

        assert (response.status_code, response.json()) == (200, {
            "status": "ok", "checks": {"database": "ok", "bucket": "ok"}})

    def test_a_missing_bucket_is_a_503_naming_it(self, client, settings, db, bucket):
        settings.REDIS_URL = ""
        settings.AWS_STORAGE_BUCKET_NAME = "tracker-no-such-bucket"
        response = client.get("/readyz")

        assert (response.status_code, response.json()) == (503, {
            **NOT_READY, "error": "not ready: bucket failed", "checks": {"database": "ok", "bucket": "failed"}})

    @pytest.mark.parametrize("database_url", [
        "sqlite:////nonexistent-folder/tracker.sqlite3",
        "postgres://postgres@127.0.0.1:{closed_port}/tracker",
    ])
    def test_the_database_unreachable_is_a_503_naming_it_while_the_process_still_serves(self, database_url):
        probe = ("from django.test import Client; import json; client = Client(); ready = client.get('/readyz'); "
                 "print(json.dumps([ready.status_code, ready.json(), client.get('/healthz').status_code]))")
        result = subprocess.run(
            [sys.executable, "manage.py", "shell", "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60,
            env={"PATH": os.environ["PATH"], "DATABASE_URL": database_url.format(closed_port=free_port()),
                 "DATABASE_POOL_TIMEOUT": "1", "DATABASE_POOL_MIN_SIZE": "0"})

        assert json.loads(result.stdout.strip().splitlines()[-1]) == [
            503, {**NOT_READY, "error": "not ready: database failed", "checks": {"database": "failed"}}, 200
        ], result.stderr


class CountingProxy:
    """`with CountingProxy(redis_url) as proxy:` forwards the connections made to `proxy.url` to that Redis and
    counts them (`proxy.connections`)."""

    def __init__(self, redis_url: str):
        host_port, _, database = redis_url.removeprefix("redis://").partition("/")
        host, _, port = host_port.partition(":")
        self.upstream = (host, int(port or 6379))
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"redis://127.0.0.1:{self.listener.getsockname()[1]}/{database or 0}"
        self.connections = 0

    def __enter__(self) -> "CountingProxy":
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return  # closed
            self.connections += 1
            upstream = socket.create_connection(self.upstream, timeout=5)
            for source, target in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(source, target), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, target: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                target.sendall(data)
        except OSError:
            pass
        finally:
            target.close()
