"""Query helpers that every app's selectors use.

Private Django APIs this module relies on (tests/core/test_django_internals.py resolves each of them and
fails loudly when an upgrade moves one):
- `django.db.models.sql.query.Query.get_compiler`: the compiler of a queryset, compiled once;
- `django.db.models.sql.compiler.SQLCompiler.as_sql`, `.get_converters`, and its `select` and `col_count`
  attributes (`SQLCompiler.setup_query` fills them): the SQL, its parameters and how to convert each column;
- `django.db.backends.postgresql.base.ServerBindingCursor`: psycopg's server-binding cursor as Django builds it;
- `django.db.backends.base.base.BaseDatabaseWrapper._prepare_cursor`: wraps a cursor as Django wraps its own.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import Expression, F, Func, Model, QuerySet, Subquery, TextField, Value
from django.db.models.functions import Coalesce

from .lookups import IdList


@dataclass(frozen=True)
class _Compiled:
    sql: str
    params: tuple
    # Where each argument goes in `params`: (position, argument name).
    slots: tuple[tuple[int, str], ...]
    # (position, converter functions, column) for the columns the ORM converts, as SQLCompiler.get_converters()
    # finds them: functions of the database's backend, given the connection of each call.
    converters: tuple[tuple[int, list, Expression], ...]


class PreparedRows:
    """The rows of a values_list() queryset whose SQL the ORM compiles once, then runs with new arguments.

    Building and compiling a small queryset costs the ORM about a millisecond of CPU, more than an
    indexed lookup costs the database: the reads that every ticket detail makes are compiled once this
    way. `build(**arguments)` returns the queryset. Each argument, an integer or a string, must reach the
    SQL unchanged as a parameter (a filter value, not a slice bound), a list of integers through
    `core.lookups.any_of()`, and nothing else in the queryset may change from call to call. Rows come as
    values_list() gives them.
    """

    def __init__(self, build: Callable[..., QuerySet]):
        self.build = build
        self._compiled: dict[tuple[str, ...], _Compiled] = {}

    def __call__(self, **arguments: int | str | list[int]) -> list[tuple]:
        return rows_together((self, arguments))[0]

    def _bound(self, arguments: dict) -> tuple[_Compiled, list]:
        names = tuple(sorted(arguments))
        compiled = self._compiled.get(names) or self._compile(names, arguments)
        params = list(compiled.params)
        for position, name in compiled.slots:
            value = arguments[name]
            params[position] = IdList(value) if isinstance(value, list) else value
        return compiled, params

    @staticmethod
    def _converted_rows(rows: list[tuple], compiled: _Compiled, connection) -> list[tuple]:
        if not compiled.converters:
            return rows
        return [PreparedRows._converted(row, compiled.converters, connection) for row in rows]

    def _compile(self, names: tuple[str, ...], arguments: dict) -> _Compiled:
        # Stand-ins for the arguments while compiling, which no key or text of ours holds. Integers stay within
        # the range of a positive 32-bit column: the ORM turns a lookup outside a column's range into no SQL.
        stand_ins = {name: self._stand_in(index, arguments[name]) for index, name in enumerate(names)}
        compiler = self.build(**stand_ins).query.get_compiler(DEFAULT_DB_ALIAS)
        sql, params = compiler.as_sql()
        slots = tuple((position, name) for position, value in enumerate(params)
                      for name, stand_in in stand_ins.items() if value == stand_in)
        if {name for _, name in slots} != set(names):
            raise ValueError(f"each argument must reach the SQL as a parameter: {names}, got {slots}")
        columns = [column for column, _, _ in compiler.select[:compiler.col_count]]
        converters = tuple((position, functions, column) for position, (functions, column)
                           in compiler.get_converters(columns).items())
        compiled = _Compiled(sql, tuple(params), slots, converters)
        self._compiled[names] = compiled
        return compiled

    @staticmethod
    def _stand_in(index: int, argument: int | str | list[int]) -> int | str | IdList:
        if isinstance(argument, str):
            return f"prepared-stand-in-{index}"
        number = 2**31 - 1 - index
        return IdList([number]) if isinstance(argument, list) else number

    @staticmethod
    def _converted(row: tuple, converters, connection) -> tuple:
        row = list(row)
        for position, functions, column in converters:
            for convert in functions:
                row[position] = convert(row[position], column, connection)
        return tuple(row)


class Statement:
    """A hand-written statement, its parameters named (`%(name)s`), whose rows rows_together() answers as it
    answers a prepared read's: a write sent in the round trip of the reads that must follow it. The statements
    of one round trip still run one after the other, each with a snapshot of its own (READ COMMITTED): a read
    sent after an UPDATE that waited for its row's lock sees what committed while it waited."""

    def __init__(self, sql: str):
        self._compiled = _Compiled(sql, (), (), ())

    def _bound(self, arguments: dict) -> tuple[_Compiled, dict]:
        return self._compiled, arguments


# A prepared query (or a statement) with its arguments, as rows_together() takes it.
Read = tuple[PreparedRows | Statement, dict]


def rows_together(*calls: Read) -> list[list[tuple]]:
    """The rows of each (prepared query, arguments): on PostgreSQL as prepared statements, all in one round
    trip; elsewhere, or with prepared statements off (settings: DATABASE_PREPARED_STATEMENTS=0, behind a
    pooler in transaction mode), one plain query each."""
    connection = connections[DEFAULT_DB_ALIAS]
    bound = [prepared._bound(arguments) for prepared, arguments in calls]
    if prepares_statements(connection):
        return _prepared_statements_rows(connection, bound)
    with connection.cursor() as cursor:
        return [_rows(cursor, compiled, params, connection) for compiled, params in bound]


def prepares_statements(connection) -> bool:
    return connection.vendor == "postgresql" and connection.settings_dict["OPTIONS"].get("prepare_threshold") is not None


def _rows(cursor, compiled: _Compiled, params: list | dict, connection) -> list[tuple]:
    cursor.execute(compiled.sql, params)
    return PreparedRows._converted_rows(cursor.fetchall(), compiled, connection)


def _prepared_statements_rows(connection, bound: list[tuple[_Compiled, list | dict]]) -> list[list[tuple]]:
    """The statements bound by the server, which psycopg then prepares on each connection they run on
    (settings: `prepare_threshold`): PostgreSQL parses and plans each of them once per connection rather
    than at every request, about three quarters of its CPU for a ticket detail. The ORM's own cursors bind
    on the client, and are never prepared. Several statements go in one pipeline: one round trip.
    """
    from django.db.backends.postgresql.base import ServerBindingCursor

    connection.ensure_connection()
    with connection.wrap_database_errors:
        # Wrapped as Django wraps its own cursors: the query log, execute wrappers and query counts see them.
        cursors = [connection._prepare_cursor(ServerBindingCursor(connection.connection)) for _ in bound]
        try:
            if len(bound) == 1:
                return [_rows(cursors[0], *bound[0], connection)]
            with connection.connection.pipeline():
                for cursor, (compiled, params) in zip(cursors, bound, strict=True):
                    cursor.execute(compiled.sql, params)
            return [PreparedRows._converted_rows(cursor.fetchall(), compiled, connection)
                    for cursor, (compiled, _) in zip(cursors, bound, strict=True)]
        finally:
            for cursor in cursors:
                cursor.close()


class PreparedLookup:
    """The one instance of `model` that `where(queryset, **arguments)` selects (or None), with the foreign
    keys named in `related` loaded as select_related() would load them: compiled once like PreparedRows,
    for the lookups every API request makes (token, membership, ticket). `where` filters on a unique key,
    and the query asks for one row without ORDER BY; or, given `first_by` (fields as order_by() takes
    them), the query answers the first row in that order.
    """

    def __init__(self, model: type[Model], where: Callable[..., QuerySet], related: tuple[str, ...] = (),
                 first_by: tuple[str, ...] = ()):
        self.model, self.related = model, related
        self.parts = [(model, "")] + [(model._meta.get_field(name).related_model, f"{name}__") for name in related]
        columns = [prefix + field.attname for part, prefix in self.parts for field in part._meta.concrete_fields]
        self.rows = PreparedRows(lambda **arguments: where(model.objects.all(), **arguments).order_by(*first_by)
                                 .values_list(*columns)[:1])

    def __call__(self, **arguments: int | str) -> Model | None:
        return self.instance(self.rows(**arguments))

    def call(self, **arguments: int | str) -> Read:
        """The lookup as rows_together() takes it, to run in the round trip of other reads: instance() then
        turns its rows into what calling the lookup would have answered."""
        return self.rows, arguments

    def instance(self, rows: list[tuple]) -> Model | None:
        if not rows:
            return None
        values, instances = iter(rows[0]), []
        for part, _ in self.parts:
            names = [field.attname for field in part._meta.concrete_fields]
            instances.append(part.from_db(DEFAULT_DB_ALIAS, names, [next(values) for _ in names]))
        found, *related = instances
        for name, instance in zip(self.related, related, strict=True):
            setattr(found, name, instance)
        return found


class JSONRows(Func):
    """The rows of a queryset as JSON text, an array of objects: each row's `columns` under their names, in
    the order of `ordering` (field names, ascending). rows_of() puts it to use."""

    output_field = TextField()

    def __init__(self, columns: dict[str, Expression], *, ordering: tuple[str, ...]):
        self.names = list(columns)
        if not all(re.fullmatch(r"[a-z_]+", name) for name in self.names):
            raise ValueError(f"column names are written into the SQL: {self.names}")
        super().__init__(*columns.values(), *(F(name) for name in ordering))

    def _parts(self, compiler, connection) -> tuple[str, str, list]:
        sql, params = [], []
        for expression in self.get_source_expressions():
            part_sql, part_params = compiler.compile(expression)
            sql.append(part_sql)
            params.extend(part_params)
        width = len(self.names)
        pairs = ", ".join(f"'{name}', {value}" for name, value in zip(self.names, sql[:width], strict=True))
        return pairs, ", ".join(sql[width:]), params

    def as_postgresql(self, compiler, connection, **extra_context):
        pairs, ordering, params = self._parts(compiler, connection)
        return f"JSON_AGG(JSON_BUILD_OBJECT({pairs}) ORDER BY {ordering})::text", params

    def as_sqlite(self, compiler, connection, **extra_context):
        # SQLite before 3.44 takes no ORDER BY inside an aggregate: a window over all the rows, in that order,
        # gives each row the whole array (rows_of() keeps one).
        pairs, ordering, params = self._parts(compiler, connection)
        return (f"JSON_GROUP_ARRAY(JSON_OBJECT({pairs})) OVER (ORDER BY {ordering} ROWS BETWEEN UNBOUNDED "
                "PRECEDING AND UNBOUNDED FOLLOWING)"), params


def rows_of(queryset: QuerySet, *, ordering: tuple[str, ...], **columns: str | Expression) -> Coalesce:
    """A column of the outer query's rows: the rows of `queryset` (filtered on OuterRef()s) as JSON text, an
    array of objects with the given names (a field name or an expression each), "[]" for none. Several of
    them put what would be a query each into one statement: each statement costs the driver and the
    database more than its rows do."""
    expressions = {name: F(column) if isinstance(column, str) else column for name, column in columns.items()}
    rows = queryset.order_by().values(rows=JSONRows(expressions, ordering=ordering))[:1]
    return Coalesce(Subquery(rows), Value("[]"), output_field=TextField())
