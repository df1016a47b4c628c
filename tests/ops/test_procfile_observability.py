"""The Procfile's server with two worker processes, black box: /metrics is one view across both workers,
its open websockets are counted by kind, every answer carries X-Request-ID, and LOG_FORMAT=json makes
every line it writes, gunicorn's and uvicorn's included, one JSON object naming its request."""

import asyncio
import json
import re
import urllib.error
import urllib.request
from email.message import Message
from pathlib import Path

import pytest
import websockets

from tests.factories import PASSWORD
from tests.polling import eventually
from tests.security.procfile import ProcfileServer, server_program

pytestmark = pytest.mark.skipif(not server_program().exists(), reason="the Procfile's server is not installed")

TOKEN = "scrape-secret"
SAMPLE = re.compile(r"^(?P<name>[a-z_]+)(?:\{(?P<labels>[^}]*)\})? (?P<value>\S+)$")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("observability")
    env = {"DATABASE_URL": f"sqlite:///{folder / 'server.sqlite3'}", "REDIS_URL": "", "WEB_CONCURRENCY": "2",
           "METRICS_TOKEN": TOKEN, "LOG_FORMAT": "json", "PROMETHEUS_MULTIPROC_DIR": str(folder / "metrics")}
    with ProcfileServer(env) as server:
        server.manage("migrate", "--no-input")
        server.manage("createuser", "ada", "--name", "Ada Lovelace", "--password", PASSWORD)
        server.token = server.manage("issuetoken", "ada")
        server.metrics_dir = folder / "metrics"
        yield server


def get(server, path: str, headers: dict) -> tuple[int, Message, bytes]:
    """On a connection of its own: the kernel hands each to whichever worker accepts first."""
    request = urllib.request.Request(f"{server.url}{path}", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def scrape(server) -> dict[tuple[str, str], float]:
    status, headers, body = get(server, "/metrics", {"Authorization": f"Bearer {TOKEN}"})
    assert (status, headers["Content-Type"]) == (200, "text/plain; version=0.0.4; charset=utf-8")
    samples = {}
    for line in body.decode().splitlines():
        if found := SAMPLE.match(line):
            samples[found["name"], found["labels"] or ""] = float(found["value"])
    return samples


def workers_of(server) -> set[int]:
    children = Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text()
    return {int(pid) for pid in children.split()}


def test_requests_of_both_workers_are_counted_in_every_scrape(server):
    labels = 'method="GET",route="api/v1/projects",status="200"'
    before = scrape(server).get(("tracker_http_requests_total", labels), 0)
    for _ in range(40):
        assert get(server, "/api/v1/projects", {"Authorization": f"Bearer {server.token}"})[0] == 200
    counts = [scrape(server).get(("tracker_http_requests_total", labels)) for _ in range(6)]
    assert counts == [before + 40] * 6
    writers = {int(re.search(r"_(\d+)\.db$", path.name)[1]) for path in server.metrics_dir.glob("counter_*.db")}
    assert len(writers & workers_of(server)) == 2  # both served, and each scrape added up the samples of both


def test_open_websockets_are_counted_by_kind_across_the_workers(server):
    project = server.post("/api/v1/projects", {"name": "Apollo", "prefix": "APL"}, server.token)["project"]
    auth = {"Authorization": f"Bearer {server.token}"}

    def open_sockets() -> tuple[float, float]:
        samples = scrape(server)
        return (samples[("tracker_websocket_connections", 'kind="board"')],
                samples[("tracker_websocket_connections", 'kind="notifications"')])

    async def hold_sockets():
        board = f"{server.ws_url}/ws/v1/projects/{project['id']}/board/"
        sockets = [await websockets.connect(board, additional_headers={**auth, "X-Request-ID": f"board-{n}"})
                   for n in range(5)]
        assert [socket.response.headers["X-Request-ID"] for socket in sockets] == [f"board-{n}" for n in range(5)]
        sockets += [await websockets.connect(f"{server.ws_url}/ws/v1/notifications/", additional_headers=auth)
                    for _ in range(3)]
        counted = await asyncio.to_thread(eventually, lambda: open_sockets() == (5, 3))
        for socket in sockets:
            await socket.close()
        return counted

    assert open_sockets() == (0, 0)
    assert asyncio.run(hold_sockets())
    assert eventually(lambda: open_sockets() == (0, 0))


def test_every_line_is_json_and_the_request_s_lines_name_its_id(server):
    status, headers, _ = get(server, "/api/v1/no-such-route", {"X-Request-ID": "fleet-check.1"})
    assert (status, headers["X-Request-ID"]) == (404, "fleet-check.1")
    status, headers, _ = get(server, "/metrics", {"X-Request-ID": "bad id!"})
    assert status == 401 and re.fullmatch(r"[0-9a-f]{32}", headers["X-Request-ID"])

    def lines_of(request_id: str) -> list[dict]:
        lines = [json.loads(line) for line in server.output().splitlines() if line.strip()]
        return [line for line in lines if line["request_id"] == request_id]

    found = eventually(lambda: len(lines_of("fleet-check.1")) == 2 and lines_of("fleet-check.1"))
    assert [(line["level"], line["logger"]) for line in found] == [("WARNING", "django.request"),
                                                                   ("INFO", "uvicorn.access")]
    assert found[0]["message"] == "Not Found: /api/v1/no-such-route"
    loggers = {line["logger"] for line in map(json.loads, server.output().splitlines())}
    assert {"gunicorn.error", "uvicorn.error"} <= loggers
