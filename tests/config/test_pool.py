"""The health check of the PostgreSQL connection pool (config/postgresql): skipped for a connection handed
out moments ago, made for any other, and a dead connection never reaches a request."""

from types import SimpleNamespace

import pytest
from django.db import connection
from psycopg_pool import ConnectionPool

from config.postgresql import base


@pytest.fixture
def checks(monkeypatch):
    checked = []
    monkeypatch.setattr(ConnectionPool, "check_connection", staticmethod(checked.append))
    return checked


@pytest.fixture
def clock(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(base, "monotonic", lambda: now[0])
    return now


def test_a_connection_handed_out_moments_ago_is_not_checked_again(checks, clock):
    pooled = SimpleNamespace()
    base.check_unless_just_used(pooled)  # never handed out: checked
    clock[0] += base.UNCHECKED_SECONDS / 2
    base.check_unless_just_used(pooled)
    clock[0] += base.UNCHECKED_SECONDS / 2
    base.check_unless_just_used(pooled)  # handed out again in the window: the window moves with it
    assert checks == [pooled]


def test_one_that_waited_longer_is_checked(checks, clock):
    pooled = SimpleNamespace()
    base.check_unless_just_used(pooled)
    clock[0] += base.UNCHECKED_SECONDS + 0.01
    base.check_unless_just_used(pooled)
    assert checks == [pooled, pooled]


def test_a_failed_check_raises_and_leaves_the_connection_to_be_checked_next_time(monkeypatch, clock):
    def dead(connection):
        raise OSError("server closed the connection")

    monkeypatch.setattr(ConnectionPool, "check_connection", staticmethod(dead))
    pooled = SimpleNamespace()
    with pytest.raises(OSError):
        base.check_unless_just_used(pooled)
    assert not hasattr(pooled, "handed_out_at")


@pytest.mark.direct_postgres
@pytest.mark.skipif(connection.vendor != "postgresql", reason="the pool: PostgreSQL")
@pytest.mark.django_db
def test_connections_the_server_dropped_while_they_waited_never_reach_a_request(monkeypatch):
    monkeypatch.setattr(base, "UNCHECKED_SECONDS", 0.0)
    pool = connection.pool
    waiting = [pool.getconn() for _ in range(pool.get_stats()["pool_available"])]
    dropped = {pooled.info.backend_pid for pooled in waiting}
    for pooled in waiting:
        pool.putconn(pooled)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(pid) FROM unnest(%s::int[]) AS pid", [list(dropped)])
        for _ in range(100):  # until they are gone
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(%s)", [list(dropped)])
            if cursor.fetchone() == (0,):
                break
    handed = pool.getconn()
    try:
        assert handed.info.backend_pid not in dropped
        assert handed.execute("SELECT 1").fetchone() == (1,)
    finally:
        pool.putconn(handed)
