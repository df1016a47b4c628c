"""A daphne process serving this project on a free loopback port: for the tests and benchmarks that
need a real server (several processes, a real browser, hundreds of websockets)."""

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STARTUP_SECONDS = 30


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class DaphneServer:
    """`with DaphneServer({"DATABASE_URL": ...}) as server:` serves on `server.url` until the block ends."""

    def __init__(self, env: dict[str, str]):
        self.env = {**os.environ, "DJANGO_SECURE_SSL_REDIRECT": "0", "DJANGO_ALLOWED_HOSTS": "127.0.0.1", **env}
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.ws_url = f"ws://127.0.0.1:{self.port}"

    def __enter__(self) -> "DaphneServer":
        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(self.port), "config.asgi:application"],
            cwd=ROOT, env=self.env, stdout=self.log, stderr=subprocess.STDOUT,
        )
        self._wait_until_listening()
        return self

    def __exit__(self, *exc_info) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()

    @property
    def pid(self) -> int:
        return self.process.pid

    def _wait_until_listening(self) -> None:
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"daphne exited with {self.process.returncode}:\n{self.output()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        self.__exit__()
        raise RuntimeError(f"daphne did not listen within {STARTUP_SECONDS} s:\n{self.output()}")

    def output(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def manage(self, *args: str) -> str:
        """A management command against this server's database and settings; its last line of output."""
        result = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=self.env, check=True,
                                capture_output=True, text=True)
        return result.stdout.strip().splitlines()[-1]

    def post(self, path: str, body: dict | None, token: str) -> dict:
        request = urllib.request.Request(
            f"{self.url}{path}", data=json.dumps(body or {}).encode(), method="POST",
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)
