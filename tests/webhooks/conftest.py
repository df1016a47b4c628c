from dataclasses import dataclass

import pytest

from config.celery import app as celery_app
from projects.roles import Role
from webhooks import local

from .receivers import Receiver

SHORT_SCHEDULE = [0, 0]  # two retries, each due at once


@pytest.fixture(autouse=True)
def _webhook_settings(settings):
    settings.WEBHOOK_ALLOWED_PRIVATE_HOSTS = ["127.0.0.1"]
    settings.WEBHOOK_RETRY_SCHEDULE = SHORT_SCHEDULE
    settings.WEBHOOK_TIMEOUT_SECONDS = 5


@pytest.fixture
def inline_deliveries(settings):
    """Deliveries handed to Celery, which runs each task at once in the thread that hands it out (the test's,
    after the commit it captures): the tasks' code, run where the test can watch it."""
    settings.CELERY_BROKER_URL = "memory://"
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = False


@pytest.fixture
def web_process_deliveries(settings):
    """Deliveries on the web process's own threads (no broker), stopped at the end of the test."""
    settings.CELERY_BROKER_URL = ""
    yield
    local.stop()


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
