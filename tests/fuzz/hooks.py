"""Schemathesis hooks for the fuzzing test (loaded through SCHEMATHESIS_HOOKS): path parameters drawn
from the seeded objects, so requests reach real tickets, entries and articles instead of a 404 at the
router, and a check that every error under /api/ is JSON with `error`."""

import atexit
import json
import os
import threading
from pathlib import Path

import schemathesis
from hypothesis import strategies as st

# Every path parameter's seeded ids, plus ids that exist nowhere or in a project the caller is not in.
SEEDED: dict[str, list[int]] = json.loads(os.environ["FUZZ_SEEDED_IDS"])
ELSEWHERE = [0, 987_654, 10**20]


@schemathesis.hook
def flatmap_path_parameters(ctx, parameters):
    if not parameters:
        return st.just(parameters)
    return st.fixed_dictionaries({
        name: st.sampled_from(SEEDED[name] * 9 + ELSEWHERE) if name in SEEDED else st.just(value)
        for name, value in parameters.items()
    })


@schemathesis.check
def error_is_json_with_error(ctx, response, case):
    if response.status_code < 400:
        return None
    try:
        body = json.loads(response.content)
    except ValueError as error:
        raise AssertionError(f"{response.status_code} without a JSON body: {response.content[:200]!r}") from error
    if not (isinstance(body, dict) and "error" in body):
        raise AssertionError(f"{response.status_code} JSON without `error`: {response.content[:200]!r}")
    return None


# Every request sent, counted where schemathesis hands over its answers, written at exit for the test.
SENT = {"requests": 0}
SENT_LOCK = threading.Lock()


@schemathesis.hook
def after_call(ctx, case, response):
    with SENT_LOCK:
        SENT["requests"] += 1


@atexit.register
def write_count() -> None:
    Path(os.environ["FUZZ_COUNT_FILE"]).write_text(str(SENT["requests"]))
