"""Login abuse: repeated failed logins lock that username, and failures for many usernames (a password
spray) lock that address, out for a while; login POSTs are rate limited per address before any password
is checked."""

import os
import socket
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.contrib.auth import hashers as django_hashers
from django.contrib.auth.hashers import MD5PasswordHasher, make_password
from django.db import connection
from django.test import Client

from accounts import lockout
from accounts.hashers import BoundedPBKDF2PasswordHasher, password_check_turn
from accounts.models import User
from config.settings import cache_config
from core.ratelimit import Quota
from tests.conftest import REDIS_TIMEOUT
from tests.factories import PASSWORD, UserFactory

LOGIN = "/accounts/login/"
ADMIN_LOGIN = "/admin/login/"


@pytest.fixture
def user(db):
    return UserFactory(username="ada")


@pytest.fixture(autouse=True)
def small_limit(settings):
    settings.LOGIN_FAILURE_LIMIT = 3
    settings.LOGIN_SPRAY_LIMIT = 4
    settings.LOGIN_LOCKOUT_SECONDS = 600
    settings.LOGIN_RATE_LIMIT_PER_MINUTE = 100
    settings.LOGIN_USERNAME_RATE_LIMIT_PER_MINUTE = 100


@pytest.fixture(autouse=True)
def mid_window(monkeypatch):
    """A fixed clock, so that no test straddles the turn of a minute."""
    monkeypatch.setattr(time, "time", lambda: 1_800_000_030.0)


class CountingHasher(MD5PasswordHasher):
    """The tests' hasher, counting the hashes it computes: the work of a login attempt."""

    hashed = 0

    def encode(self, password, salt):
        CountingHasher.hashed += 1
        return super().encode(password, salt)


@pytest.fixture
def hashes(settings):
    settings.PASSWORD_HASHERS = [f"{__name__}.CountingHasher"]
    CountingHasher.hashed = 0

    def since_last() -> int:
        counted, CountingHasher.hashed = CountingHasher.hashed, 0
        return counted

    return since_last


def unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def fail(client: Client, times: int, username: str = "ada") -> None:
    for _ in range(times):
        response = client.post(LOGIN, {"username": username, "password": "wrong"})
        assert "didn't match" in response.content.decode()


def test_after_the_limit_even_the_right_password_is_refused(client, user):
    fail(client, 3)
    response = client.post(LOGIN, {"username": "ada", "password": PASSWORD})
    assert response.status_code == 200
    assert "Too many failed login attempts. This login is locked for 10 minutes" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_below_the_limit_the_right_password_logs_in_and_clears_the_count(client, user):
    fail(client, 2)
    assert client.post(LOGIN, {"username": "ada", "password": PASSWORD}).status_code == 302
    client.logout()
    fail(client, 2)  # counting starts again
    assert client.post(LOGIN, {"username": "ada", "password": PASSWORD}).status_code == 302


def test_a_post_without_a_password_does_not_clear_the_count(client, user):
    fail(client, 2)
    assert client.post(LOGIN, {"username": "ada", "password": ""}).status_code == 200
    fail(client, 1)
    response = client.post(LOGIN, {"username": "ada", "password": PASSWORD})
    assert "Too many failed login attempts" in response.content.decode()


def test_the_lock_is_per_address_and_username(client, user):
    UserFactory(username="bob")
    fail(client, 3)
    elsewhere = Client(REMOTE_ADDR="10.0.0.9")
    assert elsewhere.post(LOGIN, {"username": "ada", "password": PASSWORD}).status_code == 302
    assert Client().post(LOGIN, {"username": "bob", "password": PASSWORD}).status_code == 302
    response = client.post(LOGIN, {"username": "ADA ", "password": PASSWORD})  # the same name, differently typed
    assert "Too many failed login attempts" in response.content.decode()


def test_the_lock_ends(client, user, settings):
    from django.core.cache import cache

    fail(client, 3)
    cache.clear()  # what the expiry of LOGIN_LOCKOUT_SECONDS does
    assert client.post(LOGIN, {"username": "ada", "password": PASSWORD}).status_code == 302


def test_the_admin_login_is_locked_out_too(client, db):
    UserFactory(username="root", is_staff=True, is_superuser=True)
    for _ in range(3):
        client.post("/admin/login/", {"username": "root", "password": "wrong"})
    response = client.post("/admin/login/", {"username": "root", "password": PASSWORD})
    assert response.status_code == 200
    assert "Too many failed login attempts" in response.content.decode()


# ---- a password spray: many usernames from one address

def test_failures_for_many_usernames_lock_the_address_out(client, user):
    for username in ["nobody1", "nobody2", "bob", "ada"]:  # unknown and known ones count alike
        fail(client, 1, username)
    for username in ["ada", "carol"]:
        response = client.post(LOGIN, {"username": username, "password": PASSWORD})
        assert response.status_code == 200
        assert "Too many failed login attempts" in response.content.decode()
    assert "_auth_user_id" not in client.session
    assert Client(REMOTE_ADDR="10.0.0.9").post(LOGIN, {"username": "ada", "password": PASSWORD}).status_code == 302


def test_one_username_failing_again_is_not_a_spray(client, user, settings):
    settings.LOGIN_FAILURE_LIMIT = 10
    fail(client, 6, "ada")
    assert client.post(LOGIN, {"username": "ada", "password": PASSWORD}).status_code == 302


def test_a_spray_from_one_ipv6_block_locks_that_block(db, user):
    for index in range(4):
        fail(Client(REMOTE_ADDR=f"2001:db8::{index + 1}"), 1, f"nobody{index}")
    response = Client(REMOTE_ADDR="2001:db8::ff").post(LOGIN, {"username": "ada", "password": PASSWORD})
    assert "Too many failed login attempts" in response.content.decode()
    assert Client(REMOTE_ADDR="2001:db8:0:1::1").post(LOGIN, {"username": "ada", "password": PASSWORD}
                                                      ).status_code == 302


def test_a_spray_locks_the_admin_login_too(client, db):
    UserFactory(username="root", is_staff=True, is_superuser=True)
    for index in range(4):
        client.post(ADMIN_LOGIN, {"username": f"nobody{index}", "password": "wrong"})
    response = client.post(ADMIN_LOGIN, {"username": "root", "password": PASSWORD})
    assert response.status_code == 200
    assert "Too many failed login attempts" in response.content.decode()


# ---- what a failed login costs

def test_a_failed_login_costs_one_password_hash_whoever_the_username_names(client, db, hashes, settings):
    settings.LOGIN_FAILURE_LIMIT = settings.LOGIN_SPRAY_LIMIT = 100
    UserFactory(username="ada")
    UserFactory(username="gone", is_active=False)
    UserFactory(username="nopass").set_unusable_password()
    hashes()  # the factories' own
    costs = {}
    for username in ["ada", "gone", "nopass", "nobody"]:
        fail(client, 1, username)
        costs[username] = hashes()
    assert costs == {"ada": 1, "gone": 1, "nopass": 1, "nobody": 1}


def test_a_locked_out_login_checks_no_password(client, user, hashes):
    fail(client, 3)
    hashes()
    client.post(LOGIN, {"username": "ada", "password": PASSWORD})
    assert hashes() == 0


# ---- the rate limit of login POSTs per address

@pytest.mark.parametrize("path", [LOGIN, ADMIN_LOGIN])
def test_login_posts_over_the_rate_limit_get_a_429_page_without_a_password_check(path, client, db, settings,
                                                                                 hashes):
    settings.LOGIN_RATE_LIMIT_PER_MINUTE = 3
    UserFactory(username="root", is_staff=True, is_superuser=True)
    statuses = [client.post(path, {"username": f"nobody{index}", "password": "wrong"}).status_code
                for index in range(3)]
    assert statuses == [200, 200, 200]
    hashes()
    response = client.post(path, {"username": "root", "password": PASSWORD})
    assert (response.status_code, response["Retry-After"], hashes()) == (429, "30", 0)
    assert response["Content-Type"] == "text/html; charset=utf-8"
    assert "Too many login attempts from your address. Try again in 30 seconds." in response.content.decode()
    assert "_auth_user_id" not in client.session


@pytest.mark.parametrize("path", [LOGIN, ADMIN_LOGIN])
def test_with_redis_out_of_reach_a_login_post_gets_a_503_page_without_a_password_check(path, client, user,
                                                                                      refused_redis, hashes):
    response = client.post(path, {"username": "ada", "password": PASSWORD})
    assert (response.status_code, response["Retry-After"], hashes()) == (503, "1", 0)
    assert "Login attempts cannot be counted right now" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_the_rate_limit_counts_per_address_and_posts_only(client, user, settings):
    settings.LOGIN_RATE_LIMIT_PER_MINUTE = 2
    assert all(client.get(LOGIN).status_code == 200 for _ in range(5))
    fail(client, 2, "nobody")
    assert client.post(LOGIN, {"username": "ada", "password": PASSWORD}).status_code == 429
    assert Client(REMOTE_ADDR="10.0.0.9").post(LOGIN, {"username": "ada", "password": PASSWORD}).status_code == 302


def test_successful_logins_count_too(db, user, settings):
    settings.LOGIN_RATE_LIMIT_PER_MINUTE = 2
    statuses = [Client().post(LOGIN, {"username": "ada", "password": PASSWORD}).status_code for _ in range(3)]
    assert statuses == [302, 302, 429]


def test_the_rate_limit_ends_with_its_minute(client, user, settings, monkeypatch):
    settings.LOGIN_RATE_LIMIT_PER_MINUTE = 1
    fail(client, 1, "nobody")
    assert client.post(LOGIN, {"username": "ada", "password": PASSWORD}).status_code == 429
    monkeypatch.setattr(time, "time", lambda: 1_800_000_061.0)
    assert client.post(LOGIN, {"username": "ada", "password": PASSWORD}).status_code == 302


# ---- a flood of one username from many addresses

def test_login_posts_naming_one_username_are_limited_whatever_their_addresses(db, user, settings, hashes):
    settings.LOGIN_USERNAME_RATE_LIMIT_PER_MINUTE = 3
    statuses = [Client(REMOTE_ADDR=f"10.0.{index}.1").post(LOGIN, {"username": "ada", "password": "wrong"}).status_code
                for index in range(3)]
    hashes()
    response = Client(REMOTE_ADDR="10.0.9.1").post(LOGIN, {"username": " ADA", "password": PASSWORD})

    assert (statuses, response.status_code, response["Retry-After"], hashes()) == ([200] * 3, 429, "30", 0)
    assert "Too many login attempts for this username. Try again in 30 seconds." in response.content.decode()
    assert Client(REMOTE_ADDR="10.0.9.1").post(LOGIN, {"username": "bob", "password": "wrong"}).status_code == 200


# ---- password checks take turns, with no database connection held

class QuickBoundedHasher(BoundedPBKDF2PasswordHasher):
    iterations = 1000


@pytest.fixture
def bounded_hasher(settings):
    settings.PASSWORD_HASHERS = [f"{__name__}.QuickBoundedHasher"]
    settings.PASSWORD_CHECK_WAIT_SECONDS = 0.2


def test_a_login_that_finds_no_turn_to_check_its_password_gets_a_429_page(client, db, bounded_hasher):
    UserFactory(username="ada")  # hashed by the bounded hasher
    with password_check_turn():  # the process's only turn, taken
        response = client.post(LOGIN, {"username": "ada", "password": PASSWORD})
    assert (response.status_code, response["Retry-After"]) == (429, "1")
    assert "Too many logins are being checked right now. Try again in 1 second." in response.content.decode()
    assert "_auth_user_id" not in client.session
    fail(client, 2)  # the refused attempt was no failure: two more do not lock the login out (limit 3)
    assert client.post(LOGIN, {"username": "ada", "password": PASSWORD}).status_code == 302


def test_password_checks_in_flight_are_bounded_per_process(db, bounded_hasher, settings, monkeypatch):
    settings.PASSWORD_CHECKS_PER_PROCESS, settings.PASSWORD_CHECK_WAIT_SECONDS = 2, 10
    in_flight, most = 0, 0
    lock = threading.Lock()
    pbkdf2 = django_hashers.pbkdf2

    def counted_pbkdf2(*args, **kwargs):
        nonlocal in_flight, most
        with lock:
            in_flight += 1
            most = max(most, in_flight)
        time.sleep(0.02)
        with lock:
            in_flight -= 1
        return pbkdf2(*args, **kwargs)

    monkeypatch.setattr(django_hashers, "pbkdf2", counted_pbkdf2)
    with ThreadPoolExecutor(max_workers=6) as checks:
        list(checks.map(lambda _: make_password("a long and winding password"), range(12)))
    assert most == 2


@pytest.mark.postgres
@pytest.mark.skipif(not os.environ.get("DATABASE_URL", "").startswith("postgres"),
                    reason="SQLite's in-memory test database is never closed")
@pytest.mark.django_db(transaction=True)
def test_a_password_is_hashed_with_no_database_connection_held(bounded_hasher, monkeypatch):
    UserFactory(username="ada")
    connection.ensure_connection()
    pool = connection.pool
    held_while_hashing = []
    pbkdf2 = django_hashers.pbkdf2

    def watched_pbkdf2(*args, **kwargs):
        stats = pool.get_stats()
        held_while_hashing.append(stats["pool_size"] - stats["pool_available"])  # connections checked out
        return pbkdf2(*args, **kwargs)

    monkeypatch.setattr(django_hashers, "pbkdf2", watched_pbkdf2)
    assert Client().post(LOGIN, {"username": "ada", "password": PASSWORD}).status_code == 302
    assert held_while_hashing == [0]


@pytest.mark.skipif(sys.platform != "linux", reason="a thread's own CPU priority is Linux's")
def test_passwords_are_hashed_at_a_lower_cpu_priority(db, bounded_hasher, monkeypatch):
    niceness = []
    pbkdf2 = django_hashers.pbkdf2

    def watched_pbkdf2(*args, **kwargs):
        niceness.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        return pbkdf2(*args, **kwargs)

    monkeypatch.setattr(django_hashers, "pbkdf2", watched_pbkdf2)
    make_password("a long and winding password")
    assert niceness == [min(19, os.getpriority(os.PRIO_PROCESS, 0) + 10)]


# ---- Redis lost while a login is checked

@pytest.mark.parametrize("path", [LOGIN, ADMIN_LOGIN])
def test_redis_lost_after_the_login_was_counted_gives_the_503_page(path, client, db, refused_redis, monkeypatch,
                                                                 hashes):
    UserFactory(username="root", is_staff=True, is_superuser=True)
    hashes()
    counted = [Quota(limit=20, count=1, reset_at=1_800_000_060)] * 2
    monkeypatch.setattr(lockout, "charge_each", lambda *limits: counted)  # counted while Redis still answered
    response = client.post(path, {"username": "root", "password": PASSWORD})
    assert (response.status_code, response["Retry-After"], hashes()) == (503, "1", 0)
    assert "Login attempts cannot be counted right now" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_redis_lost_while_the_password_is_checked_gives_the_503_page(client, user, settings, monkeypatch):
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    refused = cache_config(f"redis://127.0.0.1:{unused_port()}/0", timeout=REDIS_TIMEOUT)
    check_password = User.check_password

    def check_then_lose_redis(self, raw_password):
        checked = check_password(self, raw_password)
        settings.CACHES = refused  # Redis goes away in the middle of the login
        return checked

    monkeypatch.setattr(User, "check_password", check_then_lose_redis)
    response = client.post(LOGIN, {"username": "ada", "password": PASSWORD})
    assert (response.status_code, response["Retry-After"]) == (503, "1")
    assert "_auth_user_id" not in client.session


def test_login_limits_come_from_the_environment():
    from tests.security.test_rate_limits import settings_in_a_process

    assert settings_in_a_process({}, "settings.LOGIN_RATE_LIMIT_PER_MINUTE, settings.LOGIN_SPRAY_LIMIT") == "20 10"
    env = {"LOGIN_RATE_LIMIT_PER_MINUTE": "7", "LOGIN_SPRAY_LIMIT": "3"}
    assert settings_in_a_process(env, "settings.LOGIN_RATE_LIMIT_PER_MINUTE, settings.LOGIN_SPRAY_LIMIT") == "7 3"
