"""A daphne process serving this project on a free loopback port: for the tests and benchmarks that
need a real server (several processes, a real browser, hundreds of websockets)."""

import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from urllib.parse import quote, urlencode

ROOT = Path(__file__).resolve().parents[2]
STARTUP_SECONDS = 30


def served_database_url(**options: str) -> str:
    """pytest-django's test database, not the one DATABASE_URL names, as a URL for a server process;
    `options` become query parameters (connection options such as application_name)."""
    from django.db import connection

    db = connection.settings_dict
    credentials = quote(db["USER"]) + (f":{quote(db['PASSWORD'])}" if db["PASSWORD"] else "")
    query = f"?{urlencode(options)}" if options else ""
    return f"postgres://{credentials}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}{query}"


def listening(process: subprocess.Popen, port: int, seconds: float = STARTUP_SECONDS) -> bool:
    """Whether `process` listens on 127.0.0.1:`port` within `seconds` (False as soon as it exits)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and process.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


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
        stop(self.process)
        self.log.close()

    @property
    def pid(self) -> int:
        return self.process.pid

    def _wait_until_listening(self) -> None:
        if not listening(self.process, self.port):
            self.__exit__()
            raise RuntimeError(f"the server did not listen within {STARTUP_SECONDS} s:\n{self.output()}")

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


class ApiClient:
    """One keep-alive HTTP connection to a server, for one thread at a time, as a bearer-token client.
    Answers are (status, JSON body or None); transport errors raise."""

    def __init__(self, server_url: str, token: str, timeout: float = 30):
        host, port = server_url.removeprefix("http://").split(":")
        self.connection = http.client.HTTPConnection(host, int(port), timeout=timeout)
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    def request(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict | None]:
        payload = json.dumps(body).encode() if body is not None else None
        try:
            self.connection.request(method, path, body=payload, headers=self.headers)
            response = self.connection.getresponse()
            raw = response.read()
        except (http.client.HTTPException, OSError):
            self.connection.close()  # the next request opens a new connection
            raise
        try:
            return response.status, json.loads(raw)
        except ValueError:
            return response.status, None

    def close(self) -> None:
        self.connection.close()


class Beside:
    """Ordinary requests (the caller's project list, with a token), each on a connection of its own from the
    loopback address `source`, sent one after another while something else happens (`with Beside(...)`):
    their statuses and seconds. At most `limit`, so that nothing runs unbounded."""

    def __init__(self, server_url: str, token: str, source: str, limit: int = 300):
        host, port = server_url.removeprefix("http://").split(":")
        self.address, self.source, self.limit = (host, int(port)), source, limit
        self.headers = {"Authorization": f"Bearer {token}"}
        self.answers: list[tuple[int, float]] = []
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self.run)

    def one(self) -> tuple[int, float]:
        """One ordinary request: its status (0 when the connection failed) and seconds."""
        started = time.monotonic()
        connection = http.client.HTTPConnection(*self.address, timeout=60, source_address=(self.source, 0))
        try:
            connection.request("GET", "/api/v1/projects", headers=self.headers)
            response = connection.getresponse()
            response.read()
            status = response.status
        except (http.client.HTTPException, OSError):
            status = 0
        finally:
            connection.close()
        return status, time.monotonic() - started

    def run(self) -> None:
        while not self.stopped.is_set() and len(self.answers) < self.limit:
            self.answers.append(self.one())

    def __enter__(self) -> "Beside":
        self.thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.stopped.set()
        self.thread.join(timeout=120)

    def statuses(self) -> set[int]:
        return {status for status, _ in self.answers}

    def refused(self) -> int:
        return sum(status != 200 for status, _ in self.answers)

    def p50_ms(self) -> float:
        return statistics.median(seconds for _, seconds in self.answers) * 1000
