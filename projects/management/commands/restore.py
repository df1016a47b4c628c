import json
import shutil
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from accounts.models import User


class Command(BaseCommand):
    help = ("Load a directory written by `backup` into this database (migrated here first) and copy its media "
            "into MEDIA_ROOT; refuses a database that already has users. Prints the number of objects loaded.")

    def add_arguments(self, parser):
        parser.add_argument("directory", type=Path)

    def handle(self, *args, directory: Path, **options):
        data, media = directory / "data.json", directory / "media"
        if not (data.is_file() and media.is_dir()):
            raise CommandError(f"{directory} is not a backup: it needs data.json and media/")
        call_command("migrate", interactive=False, verbosity=0)
        if User.objects.exists():
            raise CommandError("this database already has users: restore into an empty one")
        call_command("loaddata", str(data), verbosity=0)
        shutil.copytree(media, Path(settings.MEDIA_ROOT), dirs_exist_ok=True)
        with data.open() as rows:
            self.stdout.write(str(len(json.load(rows))))
