import shutil
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

# Rebuilt by `migrate` on the target, and referred to by natural key (--natural-foreign) where a row
# points at them, so their ids need not match between the two databases. Sessions are not worth keeping.
EXCLUDED = ["contenttypes", "auth.permission", "sessions"]


class Command(BaseCommand):
    help = ("Write every row of the database (DIR/data.json, any backend) and a copy of MEDIA_ROOT (DIR/media) "
            "into DIR, which must not exist yet; prints DIR. `restore DIR` reads it back.")

    def add_arguments(self, parser):
        parser.add_argument("directory", type=Path)

    def handle(self, *args, directory: Path, **options):
        if directory.exists():
            raise CommandError(f"{directory} exists: a backup goes into a new directory")
        directory.mkdir(parents=True)
        call_command("dumpdata", exclude=EXCLUDED, natural_foreign=True, indent=None,
                     output=str(directory / "data.json"), verbosity=0)
        media = Path(settings.MEDIA_ROOT)
        if media.is_dir():
            shutil.copytree(media, directory / "media")
        else:
            (directory / "media").mkdir()
        self.stdout.write(str(directory))
