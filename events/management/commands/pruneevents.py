from django.core.management.base import BaseCommand

from events.services import prune_events


class Command(BaseCommand):
    help = "Remove the project events older than EVENT_RETENTION_DAYS (or --days); prints how many were removed."

    def add_arguments(self, parser):
        parser.add_argument("--days", type=int, default=None, help="keep this many days instead of the setting")

    def handle(self, *args, days, **options):
        if days is not None and days < 0:
            self.stderr.write("--days must be 0 or more")
            raise SystemExit(2)
        self.stdout.write(str(prune_events(retention_days=days)))
