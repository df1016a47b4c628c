from pathlib import Path

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.core.management.commands.loaddata import Command as LoadData

from accounts.models import User
from attachments.storage import import_files

# What `backup` writes; data.json is what it wrote before it streamed (one JSON array).
DATA_FILES = ("data.jsonl", "data.json")


class Command(BaseCommand):
    help = ("Load a directory written by `backup` into this database (migrated here first) and store its files "
            "where this service keeps them (MEDIA_ROOT or the bucket); refuses a database that already has users. "
            "Prints the number of objects loaded.")

    def add_arguments(self, parser):
        parser.add_argument("directory", type=Path)

    def handle(self, *args, directory: Path, **options):
        data = next((directory / name for name in DATA_FILES if (directory / name).is_file()), None)
        media = directory / "media"
        if data is None or not media.is_dir():
            raise CommandError(f"{directory} is not a backup: it needs data.jsonl and media/")
        call_command("migrate", interactive=False, verbosity=0)
        if User.objects.exists():
            raise CommandError("this database already has users: restore into an empty one")
        loader = LoadData()  # read once; it counts what it loads
        call_command(loader, str(data), verbosity=0)
        import_files(media)
        self.stdout.write(str(loader.loaded_object_count))
