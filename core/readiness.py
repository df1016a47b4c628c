"""Traps that look healthy, caught before they cost a request: prepared statements behind a pooler that cannot hold
them (a server refuses to start, `check --deploy` warns), and a bucket that is not there (`check --deploy` warns;
/readyz fails, core/health.py).

Prepared statements (the reads every request makes, core/queries.py) stay on by default: without them PostgreSQL
parses and plans every statement again, and a ticket detail is served at about 0.6 times the rate
(bench/RESULTS.md). A pooler in transaction mode that does not track them (PgBouncer before 1.21, or without
max_prepared_statements) hands a connection's next transaction to another server connection, where the statement
is missing or, worse, another client's statement of the same name exists: requests fail at random. Such a pooler
is found by what it does: two new connections each prepare the same statement, and one is refused ("already
exists") when it was given a server connection that keeps another client's statement (the first one's, or one
left by an earlier client).
"""

import logging

import psycopg
from django.core.checks import Warning, register
from django.core.exceptions import ImproperlyConfigured
from django.db import DEFAULT_DB_ALIAS, connections

from core.health import bucket_name, bucket_problem
from core.queries import prepares_statements

logger = logging.getLogger(__name__)

PROBE = "SELECT pg_backend_pid()"
ROUNDS = 3  # a pooler that hands out its server connections in turn (server_round_robin) may need more than one
CONNECT_TIMEOUT = 5
POOLER_REFUSES_PREPARED_STATEMENTS = (
    "DATABASE_URL leads to a pooler in transaction mode that does not keep prepared statements (two connections "
    "were given one server connection, which refused the second's statement): set DATABASE_PREPARED_STATEMENTS=0, "
    "or use PgBouncer 1.21 or later with max_prepared_statements set")


def pooler_problem() -> str | None:
    """Why prepared statements cannot be used through DATABASE_URL, or None (also when they are off, on SQLite, or
    when the database cannot be reached now: /readyz says so)."""
    connection = connections[DEFAULT_DB_ALIAS]
    if not prepares_statements(connection):
        return None
    database = connection.settings_dict
    target = {"dbname": database["NAME"], "user": database["USER"], "password": database["PASSWORD"],
              "host": database["HOST"], "port": database["PORT"] or None, "connect_timeout": CONNECT_TIMEOUT,
              "autocommit": True}
    try:
        for _ in range(ROUNDS):
            with psycopg.connect(**target) as first, psycopg.connect(**target) as second:
                try:
                    servers = [each.execute(PROBE, prepare=True).fetchone()[0] for each in (first, second)]
                except psycopg.errors.DuplicatePreparedStatement:
                    return POOLER_REFUSES_PREPARED_STATEMENTS
                if servers[0] == servers[1]:
                    return None  # one server connection, and the pooler kept each client's statement apart
    except psycopg.OperationalError:
        logger.warning("the database did not answer the check of prepared statements", exc_info=True)
    return None


def refuse_a_pooler_that_drops_prepared_statements() -> None:
    """Run by a server process as it starts (config/asgi.py): it would answer some requests 500 at random."""
    problem = pooler_problem()
    if problem is not None:
        raise ImproperlyConfigured(problem)


@register(deploy=True)
def deploy_traps(app_configs, **kwargs) -> list[Warning]:
    """`check --deploy`: a pooler that drops prepared statements, a bucket that cannot be used."""
    warnings = []
    problem = pooler_problem()
    if problem is not None:
        warnings.append(Warning(problem, id="tracker.W001"))
    if bucket_name():
        problem = bucket_problem()
        if problem is not None:
            warnings.append(Warning(
                f"AWS_STORAGE_BUCKET_NAME: the bucket {bucket_name()} {problem}: every upload and download would "
                "fail", hint="create the bucket, or correct AWS_STORAGE_BUCKET_NAME, AWS_S3_ENDPOINT_URL and the "
                             "credentials", id="tracker.W002"))
    return warnings

