"""core.background: one runner for background work, on the web process's threads without a broker."""

import threading
import time

import pytest
from django.db import transaction

from config.celery import app as celery_app
from core import background

from . import background_service, background_tasks
from .background_tasks import explode, record, wait_for


@pytest.fixture(autouse=True)
def _fresh(settings):
    settings.CELERY_BROKER_URL = ""
    settings.BACKGROUND_SCHEDULE = {}
    settings.BACKGROUND_SERVICES = []
    background_tasks.ran.clear()
    yield
    background.stop_local_runner()


def test_without_a_broker_a_task_runs_on_a_thread_of_the_process():
    background.run_soon(record, "a")
    assert wait_for(1) == ["a"]
    (_, thread, _), = background_tasks.ran
    assert thread.startswith("background") and thread != threading.current_thread().name


def test_a_countdown_waits_its_time_while_other_tasks_run():
    started = time.monotonic()
    background.run_soon(record, "later", countdown=0.3)
    background.run_soon(record, "now")
    assert wait_for(2) == ["now", "later"]
    assert background_tasks.ran[1][2] - started >= 0.3


def test_a_failing_task_is_logged_and_the_runner_goes_on(caplog):
    background.run_soon(explode)
    background.run_soon(record, "after")
    assert wait_for(1) == ["after"]
    background.stop_local_runner()  # the failure is logged before the pool lets go
    assert any("tests.core.background_tasks.explode" in r.getMessage() and r.exc_info for r in caplog.records)


@pytest.mark.django_db(transaction=True)
def test_after_commit_only_when_the_transaction_commits():
    with transaction.atomic():
        background.run_after_commit(record, "rolled back")
        transaction.set_rollback(True)
    with transaction.atomic():
        background.run_after_commit(record, "committed")
    assert wait_for(1) == ["committed"]
    background.stop_local_runner()  # whatever was handed out has run
    assert [what for what, _, _ in background_tasks.ran] == ["committed"]


def test_the_schedule_runs_each_entry_again_and_again(settings):
    settings.BACKGROUND_SCHEDULE = {"tests.core.background_tasks.tick": 0.05}
    background.start_in_server()
    assert wait_for(3) == ["tick"] * 3


def test_a_server_with_workers_starts_no_runner_of_its_own(settings):
    settings.CELERY_BROKER_URL = "memory://"
    background.start_in_server()
    assert background._runner is None


def test_with_a_broker_the_task_goes_to_the_workers(settings):
    settings.CELERY_BROKER_URL = "memory://"
    celery_app.conf.task_always_eager = True  # Celery runs what it was sent at once, in this thread
    try:
        background.run_soon(record, "sent")
    finally:
        celery_app.conf.task_always_eager = False
    assert [(what, thread) for what, thread, _ in background_tasks.ran] == [
        ("sent", threading.current_thread().name)]
    assert background._runner is None


SERVICE = "tests.core.background_service"


def test_a_server_without_workers_starts_the_services_and_they_stop(settings):
    settings.BACKGROUND_SERVICES = [SERVICE]
    background_service.calls.clear()
    background.start_in_server()
    background.stop_services()
    assert background_service.calls == ["start", "stop"]


def test_a_server_with_workers_leaves_the_services_to_them(settings):
    settings.CELERY_BROKER_URL = "memory://"
    settings.BACKGROUND_SERVICES = [SERVICE]
    background_service.calls.clear()
    background.start_in_server()
    assert background_service.calls == []
