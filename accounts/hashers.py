"""The password hasher: Django's PBKDF2, bounded per process and run with no database connection held
(decisions.md, "availability limits").

A hash costs about 0.2 s of a core (Django's 1,000,000 iterations), and every login, failed or not, pays one
(a username that does not exist too: Django hashes anyway, so that timing tells nothing). A login flood from
40 addresses took the API's p50 from 170 ms to 3.2 s: each login held a pooled database connection while it
hashed, and forty hashes at once left the cores to nobody else. So, around every hash:

- the thread's database connection goes back to the pool first, unless a transaction holds it
  (core.db.release_connection); what follows the hash (the session, a failure's count) takes one again;
- at most PASSWORD_CHECKS_PER_PROCESS hashes run at once in a server process; another waits for its turn
  up to PASSWORD_CHECK_WAIT_SECONDS, then gives up with PasswordChecksBusy, which the login pages answer
  with 429 (accounts/lockout.py), the password unchecked;
- the hash itself runs in one of the process's hashing threads, at a lower CPU priority (10 nice steps
  below the process, on Linux where a thread has its own): on cores busy with requests, the requests come
  first.

The algorithm's name stays `pbkdf2_sha256`: the hashes already stored are read as before.
"""

import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import cache

from django.conf import settings
from django.contrib.auth import hashers

from core.db import release_connection


class PasswordChecksBusy(Exception):
    """No turn to hash a password came within PASSWORD_CHECK_WAIT_SECONDS."""


HASHING_NICENESS = 10


@cache
def _turns(size: int) -> threading.BoundedSemaphore:
    return threading.BoundedSemaphore(size)


@cache
def _hashing_threads(size: int) -> ThreadPoolExecutor:
    """As many threads as turns: a hash that has its turn never waits for a thread."""
    return ThreadPoolExecutor(max_workers=size, thread_name_prefix="password-hash", initializer=_give_way)


def _give_way() -> None:
    if sys.platform != "linux":  # elsewhere the id of a thread would name a process
        return
    thread = threading.get_native_id()
    try:  # lowering one's own priority needs no privilege
        os.setpriority(os.PRIO_PROCESS, thread, min(19, os.getpriority(os.PRIO_PROCESS, thread) + HASHING_NICENESS))
    except OSError:  # a sandbox that forbids it: hashes then compete as they are
        pass


@contextmanager
def password_check_turn():
    """One of the process's PASSWORD_CHECKS_PER_PROCESS turns at hashing, taken with no database connection."""
    release_connection()
    turns = _turns(settings.PASSWORD_CHECKS_PER_PROCESS)
    if not turns.acquire(timeout=settings.PASSWORD_CHECK_WAIT_SECONDS):
        raise PasswordChecksBusy()
    try:
        yield
    finally:
        turns.release()


class BoundedPBKDF2PasswordHasher(hashers.PBKDF2PasswordHasher):
    """Django's default hasher; each hash takes a turn (verifying a password hashes it again, through here)."""

    def encode(self, password, salt, iterations=None):
        with password_check_turn():
            hashing = _hashing_threads(settings.PASSWORD_CHECKS_PER_PROCESS)
            return hashing.submit(super().encode, password, salt, iterations).result()
