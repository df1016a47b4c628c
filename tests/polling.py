"""Waiting for something another process does, which sends the test no signal of its own."""

import time


def eventually(condition, seconds: float = 10):
    """`condition()`'s first truthy answer within `seconds`, else its last (falsy) one; asked every 50 ms."""
    deadline = time.monotonic() + seconds
    while not (answer := condition()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return answer
