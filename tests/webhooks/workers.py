"""The Celery worker, started exactly as the Procfile's `worker:` line says."""

import os
import signal
import subprocess
import tempfile
import time

from tests.realtime.servers import ROOT

STARTUP_SECONDS = 30


def worker_command() -> str:
    lines = [line for line in (ROOT / "Procfile").read_text().splitlines() if line.startswith("worker:")]
    assert len(lines) == 1, "the Procfile has exactly one worker: line"
    return lines[0].removeprefix("worker:").strip()


class ProcfileWorker:
    """`with ProcfileWorker({...}) as worker:` runs a worker until the block ends; `kill()` ends it at once,
    as a crash or an OOM kill would (SIGKILL to the worker and whatever it started)."""

    def __init__(self, env: dict[str, str]):
        self.env = {**os.environ, **env}

    def __enter__(self) -> "ProcfileWorker":
        self.log = tempfile.NamedTemporaryFile(prefix="worker-", suffix=".log")
        self.process = subprocess.Popen(["bash", "-c", f"exec {worker_command()}"], cwd=ROOT, env=self.env,
                                        stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + STARTUP_SECONDS
        while " ready." not in self.output():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.kill()
                raise RuntimeError(f"the worker did not start:\n{self.output()[-3000:]}")
            time.sleep(0.1)
        return self

    def kill(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait()

    def __exit__(self, *exc_info) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)  # a warm shutdown: tasks in hand finish
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()
        self.log.close()

    def output(self) -> str:
        with open(self.log.name, errors="replace") as log:
            return log.read()
