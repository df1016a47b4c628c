"""The PostgreSQL connection pool (Django's, with CONN_HEALTH_CHECKS): a connection the server dropped while
it waited in the pool never reaches a request."""

import pytest
from django.db import connection


@pytest.mark.direct_postgres
@pytest.mark.skipif(connection.vendor != "postgresql", reason="the pool: PostgreSQL")
@pytest.mark.django_db
def test_connections_the_server_dropped_while_they_waited_never_reach_a_request():
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
