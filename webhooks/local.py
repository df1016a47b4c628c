"""Deliveries without a broker: threads of the web process send them, off the request path.

A request only queues ids here (after its commit); a pool of WEBHOOK_THREADS threads sends them, and
one more thread runs the sweep every WEBHOOK_SWEEP_SECONDS (due retries, deliveries of a previous run)
and the deferred hand-outs of busy endpoints. So `make run` alone delivers, and a hung receiver holds
at most WEBHOOK_ENDPOINT_CONCURRENCY of the pool's threads, never a request.
"""

import heapq
import itertools
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings
from django.db import connections

from . import attempts

logger = logging.getLogger(__name__)


class LocalRunner:
    def __init__(self, *, threads: int, sweep_seconds: float):
        self.sweep_seconds = sweep_seconds
        self.pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="webhook-delivery")
        self.later: list[tuple[float, int, int, int]] = []  # (when, tiebreak, delivery id, deferrals)
        self.order = itertools.count()
        self.changed = threading.Condition()
        self.stopping = False
        self.waiting = 0  # deliveries submitted to the pool and not yet started
        self.sweeper = threading.Thread(target=self._sweep_loop, name="webhook-sweep", daemon=True)
        self.sweeper.start()

    def submit(self, delivery_ids: list[int], *, countdown: float = 0, deferrals: int = 0) -> None:
        if countdown <= 0:
            for delivery_id in delivery_ids:
                self._start(delivery_id, deferrals)
            return
        with self.changed:
            for delivery_id in delivery_ids:
                heapq.heappush(self.later, (time.monotonic() + countdown, next(self.order), delivery_id, deferrals))
            self.changed.notify()

    def stop(self) -> None:
        with self.changed:
            self.stopping = True
            self.changed.notify()
        self.sweeper.join()
        self.pool.shutdown(wait=True, cancel_futures=True)

    def _start(self, delivery_id: int, deferrals: int) -> None:
        with self.changed:
            self.waiting += 1
        self.pool.submit(self._deliver, delivery_id, deferrals)

    def _deliver(self, delivery_id: int, deferrals: int) -> None:
        with self.changed:
            self.waiting -= 1
        try:
            retry_in = attempts.run(delivery_id, deferrals=deferrals)
            if retry_in is not None:
                self.submit([delivery_id], countdown=retry_in, deferrals=deferrals + 1)
        except Exception:
            logger.exception("webhook delivery %s failed in the web process", delivery_id)
        finally:
            connections.close_all()  # this thread's: pooled connections go back to the pool

    def _sweep_loop(self) -> None:
        next_sweep = time.monotonic()
        while True:
            with self.changed:
                if self.stopping:
                    return
                now = time.monotonic()
                due = []
                while self.later and self.later[0][0] <= now:
                    due.append(heapq.heappop(self.later))
                if not due and now < next_sweep:
                    wake_at = min([next_sweep, *(entry[0] for entry in self.later[:1])])
                    self.changed.wait(timeout=wake_at - now)
                    continue
            for _, _, delivery_id, deferrals in due:
                self._start(delivery_id, deferrals)
            if now >= next_sweep:
                self._sweep()
                next_sweep = now + self.sweep_seconds

    def _sweep(self) -> None:
        try:
            self.submit(attempts.sweep(queue_is_empty=self.waiting == 0))
        except Exception:
            logger.exception("webhook sweep failed in the web process")
        finally:
            connections.close_all()


_runner: LocalRunner | None = None
_runner_lock = threading.Lock()


def runner() -> LocalRunner:
    """The process's runner, started on first use: by a server as it starts (dispatch.start_in_server), by any
    other process at its first hand-out."""
    global _runner
    with _runner_lock:
        if _runner is None:
            _runner = LocalRunner(threads=settings.WEBHOOK_THREADS, sweep_seconds=settings.WEBHOOK_SWEEP_SECONDS)
        return _runner


def stop() -> None:
    """Stop the process's runner, if it runs (its threads finish what they send)."""
    global _runner
    with _runner_lock:
        if _runner is not None:
            _runner.stop()
            _runner = None
