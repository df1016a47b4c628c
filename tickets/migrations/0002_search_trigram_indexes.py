"""Trigram indexes for ticket search, on PostgreSQL only (SQLite has no such index: nothing happens there).

Django's `icontains` on PostgreSQL compares UPPER(column::text) LIKE UPPER(pattern), so the indexes
cover that expression; an index on the bare column would never serve it.
"""

from django.db import migrations

INDEXES = {
    "ticket_title_trgm": ("tickets_ticket", "title"),
    "ticket_description_trgm": ("tickets_ticket", "description"),
    "comment_message_trgm": ("tickets_comment", "message"),
}


def create_indexes(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    for name, (table, column) in INDEXES.items():
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {name} ON {table} USING gin ((UPPER({column}::text)) gin_trgm_ops)")


def drop_indexes(apps, schema_editor):
    # The extension stays: other schemas in the database may use it.
    if schema_editor.connection.vendor != "postgresql":
        return
    for name in INDEXES:
        schema_editor.execute(f"DROP INDEX IF EXISTS {name}")


class Migration(migrations.Migration):
    dependencies = [("tickets", "0001_initial")]

    operations = [migrations.RunPython(create_indexes, drop_indexes, elidable=False)]
