"""The Celery application of the `worker:` process (Procfile): webhook deliveries and the periodic sweep.

Configured from the Django settings named CELERY_*; the tasks are the apps' `shared_task`s, found in
each app's tasks.py. Imported by config/__init__.py, so that a web process sending a task uses this
application (its broker) too.
"""

import os

from celery import Celery
from celery.signals import worker_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("tracker")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_init.connect
def keep_metrics_beside_the_web_servers(**_) -> None:
    """With PROMETHEUS_MULTIPROC_DIR, the worker's samples (webhook outcomes) go to its own subdirectory,
    which the web server's /metrics reads too (core.metrics) and never empties when it restarts."""
    from core.metrics import WORKER_SAMPLES

    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if directory:
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = os.path.join(directory, WORKER_SAMPLES)
        os.makedirs(os.environ["PROMETHEUS_MULTIPROC_DIR"], exist_ok=True)

