from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from accounts import services
from accounts.models import User


class Command(BaseCommand):
    help = "Create an active user and print its id."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="")
        parser.add_argument("--email", default="")
        parser.add_argument("--password", default=None, help="Without it the user cannot log in to the web pages.")
        parser.add_argument("--staff", action="store_true")
        parser.add_argument("--superuser", action="store_true")

    def handle(self, *args, username, name, email, password, staff, superuser, **options):
        if User.objects.filter(username=username).exists():
            raise CommandError(f"user {username!r} already exists")
        try:
            user = services.create_user(
                username=username, name=name, email=email, password=password, is_staff=staff, is_superuser=superuser
            )
        except ValidationError as error:
            raise CommandError("; ".join(f"{field}: {' '.join(msgs)}" for field, msgs in error.message_dict.items())) from None
        self.stdout.write(str(user.pk))
