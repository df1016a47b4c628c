"""How far a running job has come, and that its process is alive: kept in the shared cache (Redis with
REDIS_URL, else the process's memory, which is then also where the job runs), never in the job's row, which
the import's own transaction cannot write to before it commits and which a SQLite import holds the lock of.
"""

import logging
import time

from django.conf import settings
from django.core.cache import cache
from redis import RedisError

logger = logging.getLogger(__name__)

# At most one cache write per this many seconds of a job's progress.
WRITE_EVERY = 0.5


def _key(job_id: int) -> str:
    return f"transfers:job:{job_id}"


class Progress:
    """`done` out of `total` units (bytes read, tickets written), written to the cache as it goes; each write is
    also the job's sign of life (it expires after TRANSFER_LOST_AFTER_SECONDS)."""

    def __init__(self, job_id: int, attempt: int):
        self.job_id, self.attempt = job_id, attempt
        self.done = self.total = 0
        self.written_at = 0.0

    def start(self, total: int) -> None:
        self.done, self.total = 0, total
        self._write(force=True)

    def advance(self, units: int = 1) -> None:
        self.set(self.done + units)

    def set(self, done: int) -> None:
        self.done = min(done, self.total) if self.total else done
        self._write()

    def alive(self) -> None:
        self._write()

    def _write(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.written_at < WRITE_EVERY:
            return
        self.written_at = now
        try:
            cache.set(_key(self.job_id), (self.attempt, self.done, self.total),
                      timeout=settings.TRANSFER_LOST_AFTER_SECONDS)
        except RedisError:  # progress is a courtesy: a Redis hiccup never fails the job
            logger.warning("job %s: progress not recorded", self.job_id)


def reported(job_id: int) -> tuple[int, int, int] | None:
    """(attempt, done, total) of the job's live run, or None when no run has given a sign of life lately.
    Raises RedisError when the cache cannot tell."""
    return cache.get(_key(job_id))


def forget(job_id: int) -> None:
    try:
        cache.delete(_key(job_id))
    except RedisError:
        pass
