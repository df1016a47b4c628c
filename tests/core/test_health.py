"""/healthz and /readyz for load balancers and orchestrators: no token, no rate limit, no query beyond the
readiness check's `SELECT 1`; 503 naming the check that failed."""

import json
import os
import subprocess
import sys

import pytest

from tests.realtime.servers import ROOT, free_port


class TestHealth:
    def test_the_process_serves(self, client, db, django_assert_num_queries):
        with django_assert_num_queries(0):
            response = client.get("/healthz")

        assert (response.status_code, response.json()) == (200, {"status": "ok"})
        assert "no-store" in response["Cache-Control"]
        assert "X-RateLimit-Limit" not in response  # outside the rate limits

    def test_only_reads(self, client):
        assert client.post("/healthz").status_code == 405

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

    def test_redis_unreachable_is_a_503_naming_it(self, client, settings, db):
        settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
        response = client.get("/readyz")

        assert (response.status_code, response.json()) == (503, {
            "status": "unavailable", "checks": {"database": "ok", "redis": "failed"}})

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
            503, {"status": "unavailable", "checks": {"database": "failed"}}, 200], result.stderr
