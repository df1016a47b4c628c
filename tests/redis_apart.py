"""Each pytest-xdist worker of a run on Redis gets a Redis database of its own: the REDIS_URL's database plus
the worker's number (gw1 of redis://…/0 uses redis://…/1).

The Celery workers, servers and sockets a test starts are handed REDIS_URL, and whatever they queue, count
or broadcast must not reach the other xdist worker's (a task taken by the other's Celery worker would run
against the other test database). Loaded with `-p` (pytest.ini), so REDIS_URL is rewritten before
pytest-django reads the settings.
"""

import os
from urllib.parse import urlsplit


def database_of_worker(redis_url: str, worker: str) -> str:
    """`redis_url` moved to the database of xdist worker `worker` ("gw0", "gw1", …)."""
    parts = urlsplit(redis_url)
    database = int(parts.path.strip("/") or 0) + int(worker.removeprefix("gw"))
    return parts._replace(path=f"/{database}").geturl()


# The REDIS_URL the run was given, before this worker's move.
GIVEN = os.environ.get("REDIS_URL", "")

if GIVEN and os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ["REDIS_URL"] = database_of_worker(GIVEN, os.environ["PYTEST_XDIST_WORKER"])
