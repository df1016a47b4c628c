import secrets

from django.core.management.base import BaseCommand

from accounts import services
from accounts.models import User

# A server bound to every address is reached at the loopback address of the same family.
WILDCARD_ADDRESSES = {"0.0.0.0": "127.0.0.1", "::": "::1"}


def served_url(host: str, port: int) -> str:
    """The address a browser on this machine opens for a server bound to host:port."""
    host = WILDCARD_ADDRESSES.get(host, host)
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


class Command(BaseCommand):
    help = ("First local run: create an admin account and an API token, printing both once, and where the server "
            "listens (`make run` passes its HOST and PORT). Later runs print only where it listens.")

    def add_arguments(self, parser):
        parser.add_argument("--username", default="admin")
        parser.add_argument("--host", default="127.0.0.1", help="the address the server binds (make run: HOST)")
        parser.add_argument("--port", type=int, default=8000, help="the port the server binds (make run: PORT)")

    def handle(self, *args, username, host, port, **options):
        url = served_url(host, port)
        if User.objects.exists():
            self.stdout.write(f"Accounts exist already: nothing to bootstrap. Serving {url}/")
            return
        password = secrets.token_urlsafe(12)
        user = services.create_user(username=username, name="Local admin", password=password, is_superuser=True)
        _, token = services.issue_token(user=user, label="local quick start")
        self.stdout.write(
            "\n".join([
                "",
                "  First run: a local admin account and an API token were created.",
                "  They are shown only now; keep them.",
                f"    admin login:  {username} / {password}   ({url}/accounts/login/)",
                f"    API token:    {token}",
                f"  Serving {url}/ (the API under {url}/api/v1/)",
                "",
            ])
        )
