import asyncio
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest
from django.db.models import Q

from core import background
from projects.roles import Role
from tests.polling import eventually
from webhooks import sender, tasks
from webhooks.delivery import Exchange, post
from webhooks.models import OPEN_STATUSES, Delivery

from .receivers import Receiver

SHORT_SCHEDULE = [0, 0]  # two retries, each due at once


@pytest.fixture(autouse=True)
def _webhook_settings(settings):
    settings.WEBHOOK_ALLOWED_PRIVATE_HOSTS = ["127.0.0.1"]
    settings.WEBHOOK_RETRY_SCHEDULE = SHORT_SCHEDULE
    settings.WEBHOOK_TIMEOUT_SECONDS = 5


@pytest.fixture
def sending(settings, transactional_db):
    """Deliveries sent by this process's sender, handed out by its background runner (no broker), on a database
    that the sender's threads see: the tests' writes commit. The sweep runs when a test calls it. Both stop at the
    end of the test."""
    settings.CELERY_BROKER_URL = ""
    settings.BACKGROUND_SCHEDULE = {}
    yield
    background.stop_local_runner()
    sender.stop()


def recorded(seconds: float = 10) -> bool:
    """Once every delivery was attempted (or finished without one) and none is in flight: the sender records
    what an attempt brought after the receiver has it."""
    return eventually(lambda: not Delivery.objects.filter(
        Q(claimed_at__isnull=False) | Q(status__in=OPEN_STATUSES, attempts=0)).exists(), seconds)


def sweep() -> None:
    """The periodic sweep, as its schedule runs it, once every attempt so far is recorded."""
    recorded()
    tasks.sweep()


def deliveries() -> list[tuple]:
    """(event, status, attempts, response_status, error) of each delivery, once they are recorded."""
    recorded()
    return list(Delivery.objects.order_by("id").values_list("event", "status", "attempts", "response_status", "error"))


@pytest.fixture
def receiver():
    """`receiver(*answers)`: a started Receiver, closed at the end of the test."""
    started = []

    def start(*answers) -> Receiver:
        started.append(Receiver(*answers).__enter__())
        return started[-1]

    yield start
    for each in started:
        each.__exit__(None, None, None)


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """`with committed():` runs what the block's writes left for after their commit, at its end."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


@dataclass
class Registered:
    client: object  # the manager's API client
    endpoint: Receiver
    webhook: dict
    secret: str


@pytest.fixture
def registered(client_for, project, manager, receiver):
    """`registered(*answers, **fields)`: a receiver answering `answers`, registered by the project's manager."""

    def register(*answers, **fields) -> Registered:
        endpoint, client = receiver(*answers), client_for(manager)
        return Registered(client, endpoint, *create_webhook(client, project.id, endpoint.url, **fields))

    return register


def post_once(url: str, *, body: bytes, headers: dict[str, str], timeout: float) -> Exchange:
    """One exchange as the sender makes it, on an event loop of its own."""
    with ThreadPoolExecutor(max_workers=2) as resolver:
        return asyncio.run(post(url, body=body, headers=headers, timeout=timeout, resolver=resolver))


def webhooks_url(project_id: int) -> str:
    return f"/api/v1/projects/{project_id}/webhooks"


def create_webhook(client, project_id: int, url: str, **fields) -> tuple[dict, str]:
    response = client.post(webhooks_url(project_id), {"url": url, **fields}, format="json")
    assert response.status_code == 201, response.json()
    return response.json()["webhook"], response.json()["secret"]


def create_ticket(client, project_id: int, title: str = "Ship it") -> None:
    response = client.post(f"/api/v1/projects/{project_id}/tickets", {"title": title}, format="json")
    assert response.status_code == 201, response.json()


ROLES_BELOW_MANAGER = [Role.VIEWER, Role.CONTRIBUTOR, Role.EDITOR, Role.DEVELOPER]
