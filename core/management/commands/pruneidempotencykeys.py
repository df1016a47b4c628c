from django.core.management.base import BaseCommand

from core.idempotency import prune


class Command(BaseCommand):
    help = "Remove the Idempotency-Key answers older than 24 hours; prints how many were removed."

    def handle(self, *args, **options):
        self.stdout.write(str(prune()))
