"""A request body's pace on the Procfile's server (decisions.md, "availability limits"): after a grace, a body
must keep WEB_BODY_MIN_RATE on average (mod_reqtimeout's rule: each KiB received buys a second), and all of it
must arrive within WEB_BODY_TIMEOUT, else the connection is closed; time the server does not read does not
count. Black box with a grace of 1 s and a total of 4 s set through the environment, and the clock's rule
on its own."""

import time

import pytest

from config.workers import BODY_MIN_RATE, BODY_RATE_GRACE_SECONDS, BODY_SECONDS, BODY_STEP_SECONDS, BodyClock

from .procfile import ProcfileServer, server_program
from .test_server_limits import answer_of, closed_after, connect, post_head

pytestmark = pytest.mark.skipif(not server_program().exists(), reason="the Procfile's server is not installed")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    database = tmp_path_factory.mktemp("pace") / "server.sqlite3"
    env = {"DATABASE_URL": f"sqlite:///{database}", "REDIS_URL": "", "WEB_CONCURRENCY": "1",
           "WEB_BODY_RATE_GRACE": "1", "WEB_BODY_TIMEOUT": "4"}
    with ProcfileServer(env) as server:
        server.manage("migrate", "--no-input")
        yield server


def test_a_body_trickled_below_the_minimum_rate_is_closed_after_the_grace(server):
    with connect(server) as connection:
        connection.sendall(post_head(100_000))
        started = time.monotonic()
        try:
            for _ in range(40):  # 5 bytes a second: 8 s if nobody stopped it
                connection.sendall(b" ")
                time.sleep(0.2)
        except (BrokenPipeError, ConnectionResetError):
            pass
        assert 1 < time.monotonic() - started < 4
        assert closed_after(connection) < 1


def test_a_body_at_a_few_kib_a_second_is_read_to_its_end(server):
    body = b'{"name": "' + b"x" * 10_000 + b'"}'
    with connect(server) as connection:
        connection.sendall(post_head(len(body)))
        started = time.monotonic()
        for offset in range(0, len(body), 1000):  # 4 KB a second, for 2.5 s
            connection.sendall(body[offset:offset + 1000])
            time.sleep(0.25)
        assert answer_of(connection).startswith(b"HTTP/1.1 401")  # read whole, then judged: no token
        assert time.monotonic() - started > 2.4


def test_a_body_held_one_byte_short_is_closed_at_the_total_deadline(server):
    with connect(server) as connection:
        started = time.monotonic()
        connection.sendall(post_head(1_000_000) + b" " * 999_999)  # fast: a credit of some 900 s at the rate
        assert 3.5 < time.monotonic() - started + closed_after(connection) < 6.5


# ---- the clock's rule, on its own (config.workers.BodyClock, with the defaults: 10 s of grace, 1 KiB/s)

def verdicts(clock: BodyClock, until: float, *, reading: bool = True, step: float = 1.0) -> str | None:
    """The clock checked every `step` seconds until `until`, as the server checks it; its first verdict."""
    now = clock.checked_at
    while now < until:
        now = min(until, now + step)
        verdict = clock.verdict(now, reading=reading)
        if verdict is not None:
            return verdict
    return None


def test_the_grace_then_a_kib_a_second_on_average():
    assert (BODY_MIN_RATE, BODY_RATE_GRACE_SECONDS, BODY_SECONDS, BODY_STEP_SECONDS) == (1024, 10, 600, 30)
    clock = BodyClock(now=0.0)
    clock.progress(5 * 1024, now=9.0)  # nothing else for 9 s: within the grace
    assert verdicts(clock, 15.0) is None  # 5 KiB bought 5 s past the grace
    assert verdicts(clock, 16.0) == "came slower than 1024 bytes/s"


def test_a_fast_start_buys_time_but_not_past_the_step_or_the_total():
    stalled = BodyClock(now=0.0)
    stalled.progress(10 * 1024 * 1024, now=1.0)
    assert verdicts(stalled, 31.0) is None
    assert verdicts(stalled, 32.0) == "sent nothing for 30 s"
    trickling = BodyClock(now=0.0)
    trickling.progress(10 * 1024 * 1024, now=1.0)
    for second in range(2, 600, 20):  # a byte every 20 s: each step in time
        trickling.progress(1, now=float(second))
        assert verdicts(trickling, float(second)) is None
    assert verdicts(trickling, 601.0) == "took over its 600 s deadline"


def test_while_the_server_does_not_read_no_clock_runs():
    clock = BodyClock(now=0.0)
    clock.progress(1024, now=1.0)
    assert verdicts(clock, 100.0, reading=False) is None  # the application took 99 s to read what came
    assert verdicts(clock, 110.0) is None  # the grace and the KiB, counted without those 99 s
    assert verdicts(clock, 112.0) == "came slower than 1024 bytes/s"
