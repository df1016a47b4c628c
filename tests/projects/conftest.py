import pytest

from accounts.consumers import member_group
from tests.conftest import GroupListener


@pytest.fixture
def removal_of(project):
    """The close messages sent to a user's member group of the project (what closes their boards of it)."""
    listeners = []

    def listen(user) -> GroupListener:
        listeners.append(GroupListener(member_group(project.pk, user.pk)))
        return listeners[-1]

    yield listen
    for listener in listeners:
        listener.close()
