from contextlib import contextmanager
from pathlib import Path

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction

from attachments.storage import export_files, stored_names

# Rebuilt by `migrate` on the target, and referred to by natural key (--natural-foreign) where a row
# points at them, so their ids need not match between the two databases. Sessions are not worth keeping.
EXCLUDED = ["contenttypes", "auth.permission", "sessions"]


@contextmanager
def one_moment():
    """Every read inside sees the database as it was at its first: on PostgreSQL one REPEATABLE READ,
    READ ONLY transaction, so rows written meanwhile (a ticket and the new status it points to) are all in
    or all out, and the backup never blocks a writer. SQLite's transaction takes the write lock instead:
    writers wait for the backup.

    Rows stream through server-side cursors even where DISABLE_SERVER_SIDE_CURSORS is set for PgBouncer:
    a cursor that lives inside one transaction is safe in transaction pooling, and without one each table
    would be fetched whole into memory."""
    outermost = not connection.in_atomic_block  # called inside a transaction (a test's), it reads in that one
    pooled = connection.settings_dict.get("DISABLE_SERVER_SIDE_CURSORS", False)
    with transaction.atomic():
        if connection.vendor == "postgresql" and outermost:
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        connection.settings_dict["DISABLE_SERVER_SIDE_CURSORS"] = False
        try:
            yield
        finally:
            connection.settings_dict["DISABLE_SERVER_SIDE_CURSORS"] = pooled


class Command(BaseCommand):
    help = ("Write every row of the database as one moment's (DIR/data.jsonl, one object per line, any backend) "
            "and every stored file those rows name, from MEDIA_ROOT or the bucket (DIR/media), into DIR, which "
            "must not exist yet; prints DIR. `restore DIR` reads it back.")

    def add_arguments(self, parser):
        parser.add_argument("directory", type=Path)

    def handle(self, *args, directory: Path, **options):
        if directory.exists():
            raise CommandError(f"{directory} exists: a backup goes into a new directory")
        directory.mkdir(parents=True)
        (directory / "media").mkdir()
        with one_moment():
            # JSON Lines: written object by object as the rows stream from the database, read back the same way.
            call_command("dumpdata", exclude=EXCLUDED, natural_foreign=True, format="jsonl",
                         output=str(directory / "data.jsonl"), verbosity=0)
            names = list(stored_names())
        # Files go after the rows: one written since is not needed, one deleted since is reported.
        missing = export_files(names, directory / "media")
        if missing:
            self.stderr.write(f"{len(missing)} stored files were deleted while the backup ran: {', '.join(missing)}")
        self.stdout.write(str(directory))
