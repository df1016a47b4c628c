"""Database connections a request gives back while it waits on something else."""

from django.db import connections


def release_connection(alias: str = "default") -> None:
    """Give this thread's connection back (to the pool, on PostgreSQL) unless a transaction holds it: before
    work that waits on something other than the database (a password hash, the bucket), so that the pool's
    connections serve the requests that need them meanwhile. The next query takes one again."""
    connection = connections[alias]
    if connection.connection is not None and not connection.in_atomic_block:
        connection.close()
