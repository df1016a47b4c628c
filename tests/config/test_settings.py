import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def settings_under(env: dict) -> dict:
    """The database and channel-layer settings a fresh process derives from `env`."""
    code = ("import json; from django.conf import settings as s; "
            "print(json.dumps({'db': s.DATABASES['default'], 'layer': s.CHANNEL_LAYERS['default']}, default=str))")
    clean = {key: value for key, value in os.environ.items() if not key.startswith(("DATABASE_", "REDIS_URL"))}
    result = subprocess.run([sys.executable, "-c", f"import django; django.setup(); {code}"], cwd=ROOT,
                            env={**clean, "DJANGO_SETTINGS_MODULE": "config.settings", **env},
                            capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def test_defaults_are_sqlite_in_wal_mode_and_the_in_memory_layer():
    found = settings_under({})
    assert found["db"]["ENGINE"] == "django.db.backends.sqlite3"
    assert found["db"]["NAME"] == str(ROOT / "db.sqlite3")
    assert found["db"]["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    assert "journal_mode=WAL" in found["db"]["OPTIONS"]["init_command"]
    assert found["layer"]["BACKEND"] == "channels.layers.InMemoryChannelLayer"


def test_a_sqlite_url_keeps_the_concurrency_options():
    found = settings_under({"DATABASE_URL": "sqlite:////tmp/elsewhere.sqlite3"})
    assert (found["db"]["NAME"], found["db"]["OPTIONS"]["timeout"]) == ("/tmp/elsewhere.sqlite3", 20)


def test_postgres_and_redis_urls():
    found = settings_under({"DATABASE_URL": "postgres://app@db.internal:5432/tracker",
                            "REDIS_URL": "redis://cache.internal:6379/1"})
    assert (found["db"]["ENGINE"], found["db"]["HOST"], found["db"]["NAME"]) == (
        "config.postgresql", "db.internal", "tracker")
    assert found["layer"] == {"BACKEND": "channels_redis.core.RedisChannelLayer",
                              "CONFIG": {"hosts": ["redis://cache.internal:6379/1"], "capacity": 1000, "expiry": 60}}


def test_postgres_gets_a_connection_pool_and_no_persistent_connections():
    found = settings_under({"DATABASE_URL": "postgres://app@db.internal:5432/tracker?application_name=tracker-web"})
    assert found["db"]["OPTIONS"] == {"application_name": "tracker-web", "prepare_threshold": 1,
                                      "pool": {"min_size": 2, "max_size": 10, "timeout": 10.0}}
    # The pool's health check is ours (config/postgresql), not Django's.
    assert (found["db"]["CONN_MAX_AGE"], found["db"]["CONN_HEALTH_CHECKS"]) == (0, False)


def test_the_pool_is_sized_from_the_environment():
    found = settings_under({"DATABASE_URL": "postgres://app@db.internal:5432/tracker", "DATABASE_POOL_MIN_SIZE": "0",
                            "DATABASE_POOL_MAX_SIZE": "25", "DATABASE_POOL_TIMEOUT": "2.5"})
    assert found["db"]["OPTIONS"]["pool"] == {"min_size": 0, "max_size": 25, "timeout": 2.5}


@pytest.mark.parametrize("sizes", [{"DATABASE_POOL_MIN_SIZE": "5", "DATABASE_POOL_MAX_SIZE": "4"},
                                   {"DATABASE_POOL_MAX_SIZE": "0", "DATABASE_POOL_MIN_SIZE": "0"}])
def test_an_impossible_pool_size_stops_the_start(sizes):
    with pytest.raises(subprocess.CalledProcessError) as failure:
        settings_under({"DATABASE_URL": "postgres://app@db.internal:5432/tracker", **sizes})
    assert "DATABASE_POOL_MIN_SIZE <= DATABASE_POOL_MAX_SIZE" in failure.value.stderr


def test_sqlite_has_no_pool():
    found = settings_under({"DATABASE_URL": "sqlite:////tmp/elsewhere.sqlite3", "DATABASE_POOL_MAX_SIZE": "25"})
    assert "pool" not in found["db"]["OPTIONS"]
    assert found["db"]["CONN_MAX_AGE"] == 60


def test_django_builds_the_pool_from_these_settings():
    """Django refuses a pool with persistent connections (ImproperlyConfigured) when it first builds it;
    building it connects to nothing."""
    code = ("import django; django.setup(); from django.db import connection; pool = connection.pool; "
            "print(type(pool).__name__, pool.min_size, pool.max_size, pool.timeout)")
    clean = {key: value for key, value in os.environ.items() if not key.startswith(("DATABASE_", "REDIS_URL"))}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                            env={**clean, "DJANGO_SETTINGS_MODULE": "config.settings",
                                 "DATABASE_URL": "postgres://app@db.internal:5432/tracker"})
    assert result.stdout.split() == ["ConnectionPool", "2", "10", "10.0"]


def test_every_middleware_runs_in_the_request_thread_under_asgi():
    """Django runs the middleware above a sync-only one in sync mode: no hop to the event loop and back
    for each of their hooks. An async-capable innermost middleware would bring those hops back."""
    from django.conf import settings
    from django.utils.module_loading import import_string

    innermost = import_string(settings.MIDDLEWARE[-1])
    assert getattr(innermost, "sync_capable", True) and not getattr(innermost, "async_capable", False)
