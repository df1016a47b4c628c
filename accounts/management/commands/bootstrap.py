import secrets

from django.core.management.base import BaseCommand

from accounts import services
from accounts.models import User


class Command(BaseCommand):
    help = "First local run: create an admin account and an API token, printing both once. Later runs do nothing."

    def add_arguments(self, parser):
        parser.add_argument("--username", default="admin")

    def handle(self, *args, username, **options):
        if User.objects.exists():
            self.stdout.write("Accounts exist already: nothing to bootstrap.")
            return
        password = secrets.token_urlsafe(12)
        user = services.create_user(username=username, name="Local admin", password=password, is_superuser=True)
        _, token = services.issue_token(user=user, label="local quick start")
        self.stdout.write(
            "\n".join([
                "",
                "  First run: a local admin account and an API token were created.",
                "  They are shown only now; keep them.",
                f"    admin login:  {username} / {password}   (http://127.0.0.1:8000/accounts/login/)",
                f"    API token:    {token}",
                "",
            ])
        )
