"""Rate limits: per token with a valid token, per client address otherwise (invalid tokens included)."""

import ast
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from unittest import mock

import pytest
from rest_framework.test import APIClient

from tests.realtime.servers import ROOT

PATH = "/api/v1/projects"


@pytest.fixture
def tiny_limits(settings):
    settings.API_RATE_LIMIT_PER_MINUTE = 3
    settings.API_ANON_RATE_LIMIT_PER_MINUTE = 2


@pytest.fixture(autouse=True)
def mid_window(monkeypatch):
    """A fixed clock, so that no test straddles the turn of a minute."""
    monkeypatch.setattr(time, "time", lambda: 1_800_000_030.0)


def assert_limited(response, limit: int):
    assert response.status_code == 429
    assert response.json() == {"code": "rate_limited", "error": "rate limit exceeded"}
    assert response["Retry-After"] == "30"
    assert (response["X-RateLimit-Limit"], response["X-RateLimit-Remaining"]) == (str(limit), "0")
    assert response["X-RateLimit-Reset"] == "1800000060"


def test_every_api_answer_carries_the_headers(client_for, manager, tiny_limits):
    api = client_for(manager)
    for remaining in ["2", "1", "0"]:
        response = api.get(PATH)
        assert response.status_code == 200
        assert (response["X-RateLimit-Limit"], response["X-RateLimit-Remaining"]) == ("3", remaining)
    assert_limited(api.get(PATH), 3)


def test_a_token_over_its_limit_does_not_limit_another(client_for, manager, outsider, tiny_limits):
    api = client_for(manager)
    for _ in range(3):
        api.get(PATH)
    assert_limited(api.post(PATH, {"name": "Gemini"}, format="json"), 3)
    assert client_for(outsider).get(PATH).status_code == 200


def test_errors_count_and_carry_the_headers(client_for, manager, tiny_limits):
    api = client_for(manager)
    response = api.get(f"{PATH}/999999/members")
    assert (response.status_code, response["X-RateLimit-Remaining"]) == (404, "2")


def test_requests_without_a_token_are_limited_per_address(db, tiny_limits, client_for, manager):
    anonymous = APIClient()
    assert [anonymous.get(PATH).status_code for _ in range(2)] == [401, 401]
    assert_limited(anonymous.get(PATH), 2)
    assert APIClient(REMOTE_ADDR="10.0.0.2").get(PATH).status_code == 401  # another address
    assert client_for(manager).get(PATH).status_code == 200  # a valid token counts on its own


def test_invalid_token_floods_are_limited_per_address(db, tiny_limits):
    statuses = [APIClient().get(PATH, HTTP_AUTHORIZATION=f"Bearer {index:064x}").status_code for index in range(4)]
    assert statuses == [401, 401, 429, 429]


def test_ipv6_clients_count_per_64_block(db, tiny_limits):
    for host in ["2001:db8::1", "2001:db8::2"]:
        APIClient(REMOTE_ADDR=host).get(PATH)
    assert_limited(APIClient(REMOTE_ADDR="2001:db8::ffff").get(PATH), 2)
    assert APIClient(REMOTE_ADDR="2001:db8:0:1::1").get(PATH).status_code == 401


def test_pages_are_not_counted(client, tiny_limits, manager):
    client.force_login(manager)
    assert all(client.get("/projects/").status_code == 200 for _ in range(5))


def test_defaults_come_from_settings_and_environment():
    from django.conf import settings

    assert (settings.API_RATE_LIMIT_PER_MINUTE, settings.API_ANON_RATE_LIMIT_PER_MINUTE) == (1200, 120)


def settings_in_a_process(env: dict[str, str], expression: str) -> str:
    code = f"import django; django.setup(); from django.conf import settings; print({expression})"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True, text=True,
                            env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", **env})
    return result.stdout.strip()


def test_environment_sets_the_limits():
    env = {"API_RATE_LIMIT_PER_MINUTE": "50", "API_ANON_RATE_LIMIT_PER_MINUTE": "5"}
    assert settings_in_a_process(env, "settings.API_RATE_LIMIT_PER_MINUTE, settings.API_ANON_RATE_LIMIT_PER_MINUTE"
                                 ) == "50 5"


def test_counters_live_in_redis_when_redis_url_is_set():
    from config.settings import cache_config

    assert cache_config("redis://127.0.0.1:6379/9", timeout=1.5) == {"default": {
        "BACKEND": "django_redis.cache.RedisCache", "LOCATION": "redis://127.0.0.1:6379/9", "KEY_PREFIX": "tracker",
        "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": 1.5, "SOCKET_TIMEOUT": 1.5}}}


@pytest.mark.redis
@pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs Redis (REDIS_URL)")
def test_two_processes_share_one_counter():
    for _ in range(2):  # a second try only if the two processes fell into different minutes
        bucket = f"test-shared-{os.getpid()}-{time.monotonic_ns()}"
        charge = f"[(q.reset_at, q.count) for q in [__import__('core.ratelimit').ratelimit.charge(({bucket!r}, 9))]][0]"
        (first_window, first), (second_window, second) = [
            ast.literal_eval(settings_in_a_process({}, charge)) for _ in range(2)]
        if first_window == second_window:
            break
    assert (first, second) == (1, 2)


@pytest.mark.redis
@pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs Redis (REDIS_URL)")
def test_a_charge_is_one_round_trip_to_redis():
    """A token's charge counts its token and its user: both in one pipeline, nothing else sent."""
    from redis.client import Pipeline, Redis

    from core import ratelimit

    bucket = f"test-one-trip-{os.getpid()}-{time.monotonic_ns()}"
    executed = []
    original = Pipeline.execute

    def counted(self, *args, **kwargs):
        executed.append(len(self.command_stack))
        return original(self, *args, **kwargs)

    with mock.patch.object(Pipeline, "execute", counted), \
            mock.patch.object(Redis, "execute_command", side_effect=AssertionError("a command of its own")):
        quotas = [ratelimit.charge((bucket, 9), (f"{bucket}-user", 20)) for _ in range(3)]
    assert [quota.count for quota in quotas] == [1, 2, 3]
    assert executed == [4, 4, 4]  # INCR and EXPIRE of each of the two counters


@pytest.mark.redis
@pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs Redis (REDIS_URL)")
def test_requests_in_contexts_of_their_own_share_the_process_redis_connections():
    """Django keeps a cache object per thread, and ASGI serves each request in a thread of its own: the
    connections come from one pool per process all the same (django-redis)."""
    import redis

    from core import ratelimit

    server = redis.Redis.from_url(os.environ["REDIS_URL"])
    ratelimit.charge((f"test-warm-{os.getpid()}", 9))
    opened_before = server.info("stats")["total_connections_received"]

    def one_request(index):
        return ratelimit.charge((f"test-pool-{os.getpid()}-{index}", 9)).count

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert set(pool.map(one_request, range(40))) == {1}
    assert server.info("stats")["total_connections_received"] - opened_before <= 8


@pytest.mark.redis
@pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs Redis (REDIS_URL)")
def test_a_count_that_fails_gives_its_connection_back():
    import redis

    from core import ratelimit
    from core.cache import cache_key, redis_client

    bucket = f"test-fails-{os.getpid()}-{time.monotonic_ns()}"
    key = cache_key(f"ratelimit:{bucket}:{int(time.time()) // 60}")
    server = redis.Redis.from_url(os.environ["REDIS_URL"])
    server.set(key, "not a number")
    pool = redis_client().connection_pool
    in_use = len(pool._in_use_connections)
    with pytest.raises(redis.ResponseError):
        ratelimit.charge((bucket, 9))
    assert len(pool._in_use_connections) == in_use
    server.delete(key)
    assert [ratelimit.charge((bucket, 9)).count for _ in range(2)] == [1, 2]  # the pool serves on
    server.delete(key)


def cache_keys() -> list[str]:
    """Every key of this test in the shared cache (its own KEY_PREFIX: tests/conftest.py)."""
    from django.core.cache import cache

    if hasattr(cache, "keys"):  # django-redis
        return cache.keys("*")
    return [key for key in cache._cache if key.startswith(f"{cache.key_prefix}:")]  # Django's local-memory cache


def test_a_flood_of_random_tokens_creates_no_key_per_token(db, settings):
    """A token counts only once it authenticates: random ones all count against their address."""
    settings.API_ANON_RATE_LIMIT_PER_MINUTE = 1000
    statuses = {APIClient().get(PATH, HTTP_AUTHORIZATION=f"Bearer {os.urandom(32).hex()}").status_code
                for _ in range(50)}
    assert statuses == {401}
    assert len(cache_keys()) == 1  # the address's counter of this minute


@pytest.mark.parametrize("resource", ["board", "ticket"])
def test_a_304_does_not_count(client_for, manager, project, tiny_limits, resource):
    """decisions.md, "Conditional requests": an unchanged resource answered 304 is given back its count."""
    from tests.factories import TicketFactory

    url = {"board": f"/api/v1/projects/{project.pk}/board",
           "ticket": f"/api/v1/projects/{project.pk}/tickets/{TicketFactory(project=project).number}"}[resource]
    api = client_for(manager)
    first = api.get(url)
    assert (first.status_code, first["X-RateLimit-Remaining"]) == (200, "2")
    for _ in range(5):
        again = api.get(url, HTTP_IF_NONE_MATCH=first["ETag"])
        assert (again.status_code, again["X-RateLimit-Remaining"]) == (304, "2")
    assert [api.get(url).status_code for _ in range(2)] == [200, 200]
    assert_limited(api.get(url, HTTP_IF_NONE_MATCH=first["ETag"]), 3)  # over the limit, a 304 is refused too
