"""Tasks for tests/core/test_background.py: each notes where and when it ran."""

import threading
import time

from celery import shared_task

ran: list[tuple[str, str, float]] = []  # (what, thread name, monotonic time)
ran_changed = threading.Condition()


def note(what: str) -> None:
    with ran_changed:
        ran.append((what, threading.current_thread().name, time.monotonic()))
        ran_changed.notify_all()


def wait_for(count: int, seconds: float = 10) -> list[str]:
    """What ran, once at least `count` tasks have (or `seconds` have passed)."""
    with ran_changed:
        ran_changed.wait_for(lambda: len(ran) >= count, timeout=seconds)
        return [what for what, _, _ in ran]


@shared_task(name="tests.core.background_tasks.record")
def record(what: str) -> None:
    note(what)


@shared_task(name="tests.core.background_tasks.explode")
def explode() -> None:
    raise RuntimeError("boom")


@shared_task(name="tests.core.background_tasks.tick")
def tick() -> None:
    note("tick")
