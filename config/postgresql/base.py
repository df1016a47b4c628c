"""Django's PostgreSQL backend (settings: ENGINE "config.postgresql"), with a lighter health check for
psycopg's connection pool.

Django's check (CONN_HEALTH_CHECKS) costs a round trip to PostgreSQL each time a request takes a
connection from the pool: a tenth of a ticket detail's throughput. This pool hands a connection out
unchecked when it handed it out moments ago, as HikariCP does within its 500 ms "alive bypass window",
and checks one that has waited longer, so that a dead one is replaced before any request sees it (one
that breaks while in use is discarded as it comes back). Within the window, a connection the server
dropped costs the request that takes it an error, as it would had it been dropped just after a check.
"""

from time import monotonic

from django.db.backends.base.base import NO_DB_ALIAS
from django.db.backends.postgresql import base
from psycopg import Connection
from psycopg_pool import ConnectionPool

UNCHECKED_SECONDS = 0.5


def check_unless_just_used(connection: Connection) -> None:
    """The pool's `check` callback, run as it hands a connection out: raises, as
    ConnectionPool.check_connection does, for a dead connection."""
    now = monotonic()
    if now - getattr(connection, "handed_out_at", float("-inf")) > UNCHECKED_SECONDS:
        ConnectionPool.check_connection(connection)
    connection.handed_out_at = now


class DatabaseWrapper(base.DatabaseWrapper):
    @property
    def pool(self):
        options = self.settings_dict["OPTIONS"].get("pool")
        if options and self.alias != NO_DB_ALIAS and self.alias not in self._connection_pools:
            # Built as Django builds it, with our check (config/settings.py keeps CONN_MAX_AGE at 0, as Django
            # requires with a pool).
            pool = ConnectionPool(kwargs={**self.get_connection_params(), "autocommit": True}, open=False,
                                  configure=self._configure_connection, check=check_unless_just_used,
                                  **({} if options is True else options))
            self._connection_pools.setdefault(self.alias, pool)
        return super().pool
