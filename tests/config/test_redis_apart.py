"""The Redis database of each xdist worker (tests/redis_apart.py)."""

import os

import pytest

from tests.redis_apart import GIVEN, database_of_worker


@pytest.mark.parametrize(("url", "worker", "moved"), [
    ("redis://127.0.0.1:6379/0", "gw0", "redis://127.0.0.1:6379/0"),
    ("redis://127.0.0.1:6379/0", "gw1", "redis://127.0.0.1:6379/1"),
    ("redis://:secret@cache.internal:6380/4", "gw1", "redis://:secret@cache.internal:6380/5"),
    ("redis://127.0.0.1:6379", "gw1", "redis://127.0.0.1:6379/1"),
])
def test_each_worker_moves_to_the_database_after_the_one_before(url, worker, moved):
    assert database_of_worker(url, worker) == moved


@pytest.mark.skipif(not os.environ.get("PYTEST_XDIST_WORKER") or not os.environ.get("REDIS_URL"),
                    reason="an xdist worker on Redis")
def test_this_worker_and_what_it_starts_use_its_database():
    from django.conf import settings

    assert os.environ["REDIS_URL"] == database_of_worker(GIVEN, os.environ["PYTEST_XDIST_WORKER"])
    assert settings.CACHES["default"]["LOCATION"] == settings.CELERY_BROKER_URL == os.environ["REDIS_URL"]
