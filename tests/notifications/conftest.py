import pytest

from notifications.broadcast import notification_group
from notifications.models import Notification
from projects.roles import Role
from tests.conftest import GroupListener
from tests.factories import MembershipFactory, TicketFactory, UserFactory


@pytest.fixture
def ticket(project, manager):
    return TicketFactory(project=project, created_by=manager, title="Fix login")


@pytest.fixture
def member(project):
    """A member named for mentions: `@ada`."""

    def make(username: str, role: Role = Role.EDITOR, name: str = ""):
        return MembershipFactory(project=project, role=role, user=UserFactory(username=username, name=name)).user

    return make


def told(user) -> list[tuple[str, str]]:
    """(type, message) of every notification of `user`, oldest first."""
    return list(Notification.objects.filter(user=user).order_by("id").values_list("type", "message"))


class NotificationListener(GroupListener):
    """A user's notification sockets' group: the frames it received."""

    def frames(self) -> list[dict]:
        return [message["frame"] for message in self.messages()]


@pytest.fixture
def listen():
    listeners = []

    def make(user) -> NotificationListener:
        listeners.append(NotificationListener(notification_group(user.pk)))
        return listeners[-1]

    yield make
    for listener in listeners:
        listener.close()
