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
  with 429 (accounts/lockout.py), the password unchecked.

The algorithm's name stays `pbkdf2_sha256`: the hashes already stored are read as before.
"""

import threading
from contextlib import contextmanager
from functools import cache

from django.conf import settings
from django.contrib.auth import hashers

from core.db import release_connection


class PasswordChecksBusy(Exception):
    """No turn to hash a password came within PASSWORD_CHECK_WAIT_SECONDS."""


@cache
def _turns(size: int) -> threading.BoundedSemaphore:
    return threading.BoundedSemaphore(size)


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
            return super().encode(password, salt, iterations)
