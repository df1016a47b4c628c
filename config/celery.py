"""The Celery application of the `worker:` process (Procfile): every kind of background work (core/background.py)
with its periodic schedule (the embedded beat).

Configured from the Django settings named CELERY_*; the tasks are the apps' `shared_task`s, found in
each app's tasks.py. Imported by config/__init__.py, so that a web process sending a task uses this
application (its broker) too. A worker starts the background services (BACKGROUND_SERVICES: the webhook
sender) as it gets ready, and stops them as it shuts down, after its tasks in hand.
"""

import logging
import os

from celery import Celery
from celery.signals import worker_ready, worker_shutdown

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("tracker")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_ready.connect
def start_services(**_) -> None:
    from core import background

    background.start_services()


@worker_shutdown.connect
def stop_services(**_) -> None:
    from core import background

    background.stop_services()


class RoutineAtDebug(logging.Filter):
    """The beat's line for each task it sends (the webhook sweep: every WEBHOOK_SWEEP_SECONDS) is routine: DEBUG,
    not INFO, so a worker's log holds what happened rather than a line every two seconds."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno == logging.INFO and str(record.msg).startswith("Scheduler: Sending due task"):
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
            return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)
        return True


logging.getLogger("celery.beat").addFilter(RoutineAtDebug())
