"""Black box on PostgreSQL and Redis: the Procfile's `web:` line takes the requests, its `worker:` line (Celery)
runs the jobs, and the round trip gives the same project back."""

import os

import httpx

from accounts.services import issue_token
from projects.models import Project
from tests.realtime.conftest import SEVERAL_PROCESSES
from tests.realtime.servers import served_database_url
from tests.security.procfile import ProcfileServer
from tests.webhooks.workers import ProcfileWorker

from .projects import rich_project, snapshot
from .test_servers import export_of, imported

pytestmark = SEVERAL_PROCESSES


def test_the_round_trip_on_the_procfile_worker(settings):
    project = rich_project()
    env = {"DATABASE_URL": served_database_url(), "REDIS_URL": os.environ["REDIS_URL"], "WEB_CONCURRENCY": "1",
           "MEDIA_ROOT": str(settings.MEDIA_ROOT), "DATABASE_POOL_MIN_SIZE": "1", "DATABASE_POOL_MAX_SIZE": "4"}
    token = issue_token(user=project.owner)[1]
    with ProcfileServer(env) as web, ProcfileWorker(env), \
            httpx.Client(base_url=web.url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as client:
        copy = imported(client, export_of(client, project.pk), "Apollo again")
    assert snapshot(Project.objects.get(pk=copy["project_id"])) == snapshot(project)
