from django.db import transaction

from events.publish import announce


def write_events(project, actor, count: int, event: str = "ticket.updated") -> None:
    """`count` kept events, each in its own transaction as a service would write them."""
    for number in range(count):
        with transaction.atomic():
            announce(project_id=project.id, actor=actor, frames=[{"event": event, "n": number}])


# The async socket tests here use the realtime tests' connection clean-up.
from tests.realtime.conftest import async_db_connections  # noqa: E402, F401
