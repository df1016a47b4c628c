from django.core.management.base import BaseCommand, CommandError

from accounts import services
from accounts.models import User
from core.errors import RuleViolation


class Command(BaseCommand):
    help = "Issue a personal API token and print it (the only time it is shown)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="issued with manage.py", help="The token's label.")

    def handle(self, *args, username, name, **options):
        user = User.objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"user {username!r} does not exist")
        if not user.is_active:
            raise CommandError(f"user {username!r} is inactive")
        try:
            _, plain = services.issue_token(user=user, label=name)
        except RuleViolation as refused:
            raise CommandError(refused.message) from None
        self.stdout.write(plain)
