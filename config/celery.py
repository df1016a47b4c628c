"""The Celery application of the `worker:` process (Procfile): webhook deliveries and the periodic sweep.

Configured from the Django settings named CELERY_*; the tasks are the apps' `shared_task`s, found in
each app's tasks.py. Imported by config/__init__.py, so that a web process sending a task uses this
application (its broker) too.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("tracker")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
