"""A background service for tests/core/test_background.py: what it was asked, in order."""

calls: list[str] = []


def start() -> None:
    calls.append("start")


def stop() -> None:
    calls.append("stop")
