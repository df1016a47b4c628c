"""Background work, one runner for every kind (import and export jobs, e-mails, sweeps): Celery's workers when a
broker is configured (CELERY_BROKER_URL, which REDIS_URL sets: the Procfile's `worker:` line), else a pool of the
web process's own threads, so that `make run` alone does everything.

Work travels as a Celery task and the ids it needs: the rows say the rest. A task must be safe to run twice, and
each kind has a periodic sweep (BACKGROUND_SCHEDULE: the workers' beat runs it, or this runner) that picks up work
whose hand-out was lost with a process.

Some work waits rather than computes, and is better done by one long-lived part of the process than by a thread
per task: BACKGROUND_SERVICES names them (modules with start() and stop(), e.g. the webhook sender, an event loop
of its own), started with whichever process does background work (a worker as it gets ready, config/celery.py; a
server without workers as it starts) and stopped with it; a task may also start one at its first use.
"""

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial

from celery import Task
from django.conf import settings
from django.db import close_old_connections, connections, transaction
from django.utils.module_loading import import_string

logger = logging.getLogger(__name__)


def uses_workers() -> bool:
    return bool(settings.CELERY_BROKER_URL)


def run_soon(task: Task, *args, countdown: float = 0) -> None:
    """Run `task(*args)` in the background, after `countdown` seconds."""
    if uses_workers():
        task.apply_async(args, countdown=countdown or None)
    else:
        local_runner().submit(task, args, countdown=countdown)


def run_after_commit(task: Task, *args, countdown: float = 0) -> None:
    """`run_soon` once the current transaction commits, nothing if it rolls back. robust: a broker that is down
    is logged and never fails the committed write; the task's sweep picks the work up later."""
    transaction.on_commit(partial(run_soon, task, *args, countdown=countdown), robust=True)


class LocalRunner:
    """Tasks on a pool of this process's threads, those with a countdown when it ends, and every entry of
    BACKGROUND_SCHEDULE every so many seconds: what the workers and their beat do, for a process without them."""

    def __init__(self, *, threads: int, schedule: dict[str, float]):
        self.pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="background")
        self.later: list[tuple[float, int, Callable, tuple]] = []  # (when, tiebreak, task, args)
        self.order = itertools.count()
        self.changed = threading.Condition()
        self.stopping = False
        for name, seconds in schedule.items():
            self._every(import_string(name), seconds, first=time.monotonic())
        self.timer = threading.Thread(target=self._timer_loop, name="background-timer", daemon=True)
        self.timer.start()

    def submit(self, task: Task, args: tuple, *, countdown: float = 0) -> None:
        if countdown <= 0:
            self.pool.submit(self._run, task, args)
            return
        self._at(time.monotonic() + countdown, task, args)

    def stop(self) -> None:
        """Stop taking work; the tasks already running finish, those waiting for their time are dropped (their
        rows keep them for the sweep of the next process)."""
        with self.changed:
            self.stopping = True
            self.changed.notify()
        self.timer.join()
        self.pool.shutdown(wait=True, cancel_futures=True)

    def _at(self, when: float, task: Callable, args: tuple) -> None:
        with self.changed:
            heapq.heappush(self.later, (when, next(self.order), task, args))
            self.changed.notify()

    def _every(self, task: Task, seconds: float, *, first: float) -> None:
        self._at(first, _Periodic(task, seconds, self), ())

    def _run(self, task: Callable, args: tuple) -> None:
        close_old_connections()
        try:
            task(*args)
        except Exception:
            logger.exception("background task %s%r failed", task.name, args)
        finally:
            connections.close_all()  # this thread's: pooled connections go back to the pool

    def _timer_loop(self) -> None:
        while True:
            with self.changed:
                if self.stopping:
                    return
                now = time.monotonic()
                if not self.later or self.later[0][0] > now:
                    self.changed.wait(timeout=self.later[0][0] - now if self.later else None)
                    continue
                _, _, task, args = heapq.heappop(self.later)
            self.pool.submit(self._run, task, args)


class _Periodic:
    """A schedule entry: runs its task, then comes back `seconds` after that run began (runs never overlap)."""

    def __init__(self, task: Task, seconds: float, runner: LocalRunner):
        self.task, self.seconds, self.runner = task, seconds, runner
        self.name = task.name

    def __call__(self) -> None:
        began = time.monotonic()
        try:
            self.task()
        finally:
            self.runner._every(self.task, self.seconds, first=began + self.seconds)


_runner: LocalRunner | None = None
_runner_lock = threading.Lock()


def local_runner() -> LocalRunner:
    """This process's runner, started at its first use: by a server as it starts (start_in_server), by any other
    process at its first hand-out."""
    global _runner
    with _runner_lock:
        if _runner is None:
            _runner = LocalRunner(threads=settings.BACKGROUND_THREADS, schedule=settings.BACKGROUND_SCHEDULE)
        return _runner


def stop_local_runner() -> None:
    """Stop this process's runner, if it runs."""
    global _runner
    with _runner_lock:
        if _runner is not None:
            _runner.stop()
            _runner = None


def start_in_server() -> None:
    """Run once by a server process as it loads the application (config/asgi.py). Without workers the process
    does the background work itself: its schedule and services start now, not at the first hand-out, so that work
    left by a previous run is taken up with no new event."""
    if not uses_workers():
        local_runner()
        start_services()


def start_services() -> None:
    """Start each of BACKGROUND_SERVICES (one already running goes on)."""
    for name in settings.BACKGROUND_SERVICES:
        import_string(f"{name}.start")()


def stop_services() -> None:
    """Stop each of BACKGROUND_SERVICES that runs, the last started first."""
    for name in reversed(settings.BACKGROUND_SERVICES):
        import_string(f"{name}.stop")()
