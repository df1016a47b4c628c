"""What the settings derive from the environment (config/settings.py), read in this process."""

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db.utils import ConnectionHandler

from config import settings as project_settings
from config.settings import ROOT_DIR_DATABASE, cache_config, channel_layers, database_config


@pytest.fixture
def env(monkeypatch):
    """Set variables for one test; DATABASE_* and REDIS_URL start unset."""
    import os

    for name in [name for name in os.environ if name.startswith(("DATABASE_", "REDIS_URL"))]:
        monkeypatch.delenv(name)

    def set_(**variables: str):
        for name, value in variables.items():
            monkeypatch.setenv(name, value)

    return set_


def test_defaults_are_sqlite_in_wal_mode_and_the_in_memory_layer(env):
    env()
    found = database_config()
    assert (found["ENGINE"], found["NAME"]) == ("django.db.backends.sqlite3", str(ROOT_DIR_DATABASE))
    assert found["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    assert "journal_mode=WAL" in found["OPTIONS"]["init_command"]
    assert channel_layers("") == {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    assert cache_config("")["default"]["BACKEND"] == "django.core.cache.backends.locmem.LocMemCache"


def test_a_sqlite_url_keeps_the_concurrency_options(env):
    env(DATABASE_URL="sqlite:////tmp/elsewhere.sqlite3", DATABASE_POOL_MAX_SIZE="25")
    found = database_config()
    assert (found["NAME"], found["OPTIONS"]["timeout"], found["CONN_MAX_AGE"]) == ("/tmp/elsewhere.sqlite3", 20, 60)
    assert "pool" not in found["OPTIONS"]


def test_postgres_and_redis_urls(env):
    env(DATABASE_URL="postgres://app@db.internal:5432/tracker")
    found = database_config()
    assert (found["ENGINE"], found["HOST"], found["NAME"]) == ("django.db.backends.postgresql", "db.internal", "tracker")
    assert channel_layers("redis://cache.internal:6379/1") == {"default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {"hosts": ["redis://cache.internal:6379/1"], "capacity": 1000, "expiry": 60}}}


def test_postgres_gets_a_checked_connection_pool_and_no_persistent_connections(env):
    env(DATABASE_URL="postgres://app@db.internal:5432/tracker?application_name=tracker-web")
    found = database_config()
    assert found["OPTIONS"] == {"application_name": "tracker-web", "prepare_threshold": 1,
                                "pool": {"min_size": 2, "max_size": 10, "timeout": 10.0}}
    assert (found["CONN_MAX_AGE"], found["CONN_HEALTH_CHECKS"]) == (0, True)


def test_the_pool_is_sized_from_the_environment(env):
    env(DATABASE_URL="postgres://app@db.internal:5432/tracker", DATABASE_POOL_MIN_SIZE="0",
        DATABASE_POOL_MAX_SIZE="25", DATABASE_POOL_TIMEOUT="2.5")
    assert database_config()["OPTIONS"]["pool"] == {"min_size": 0, "max_size": 25, "timeout": 2.5}


@pytest.mark.parametrize("sizes", [{"DATABASE_POOL_MIN_SIZE": "5", "DATABASE_POOL_MAX_SIZE": "4"},
                                   {"DATABASE_POOL_MAX_SIZE": "0", "DATABASE_POOL_MIN_SIZE": "0"}])
def test_an_impossible_pool_size_stops_the_start(env, sizes):
    env(DATABASE_URL="postgres://app@db.internal:5432/tracker", **sizes)
    with pytest.raises(ImproperlyConfigured, match="DATABASE_POOL_MIN_SIZE <= DATABASE_POOL_MAX_SIZE"):
        database_config()


def test_django_builds_the_pool_from_these_settings(env):
    """Django refuses a pool with persistent connections (ImproperlyConfigured) when it first builds it;
    building it connects to nothing."""
    env(DATABASE_URL="postgres://app@db.internal:5432/tracker")
    pool = ConnectionHandler({"default": database_config()})["default"].pool
    assert (type(pool).__name__, pool.min_size, pool.max_size, pool.timeout) == ("ConnectionPool", 2, 10, 10.0)


def test_every_middleware_runs_in_the_request_thread_under_asgi():
    """Django runs the middleware above a sync-only one in sync mode: no hop to the event loop and back
    for each of their hooks. An async-capable innermost middleware would bring those hops back."""
    from django.utils.module_loading import import_string

    innermost = import_string(project_settings.MIDDLEWARE[-1])
    assert getattr(innermost, "sync_capable", True) and not getattr(innermost, "async_capable", False)


AVAILABILITY_LIMITS = ("settings.WS_MAX_PER_USER, settings.WEB_MAX_WEBSOCKETS, settings.PASSWORD_CHECKS_PER_PROCESS, "
                       "settings.PASSWORD_CHECK_WAIT_SECONDS, settings.LOGIN_USERNAME_RATE_LIMIT_PER_MINUTE, "
                       "settings.AWS_S3_CONNECT_TIMEOUT, settings.AWS_S3_READ_TIMEOUT")


def test_the_availability_limits_and_their_defaults_come_from_the_environment():
    from tests.security.test_rate_limits import settings_in_a_process

    assert settings_in_a_process({}, AVAILABILITY_LIMITS) == "20 10000 1 2.0 10 3.0 10.0"
    env = {"WS_MAX_PER_USER": "5", "WEB_MAX_WEBSOCKETS": "300", "PASSWORD_CHECKS_PER_PROCESS": "3",
           "PASSWORD_CHECK_WAIT_SECONDS": "0.5", "LOGIN_USERNAME_RATE_LIMIT_PER_MINUTE": "4",
           "AWS_S3_CONNECT_TIMEOUT": "1", "AWS_S3_READ_TIMEOUT": "2.5"}
    assert settings_in_a_process(env, AVAILABILITY_LIMITS) == "5 300 3 0.5 4 1.0 2.5"
