"""Black box: the round trip through `make run`'s server alone (daphne on SQLite; the jobs on the web process's
background runner), and its refusal of an oversized upload before reading it."""

import io
import json
import socket
import subprocess
import sys
import zipfile

import httpx
import pytest

from tests.polling import eventually
from tests.realtime.servers import ROOT, DaphneServer
from tests.security.procfile import ProcfileServer

VOLATILE = {"id", "comment_id", "path", "folder_id", "parent_id", "exported_at", "created_at", "updated_at"}


def finished(client: httpx.Client, job: dict) -> dict:
    def done():
        answer = client.get(f"/api/v1/jobs/{job['id']}").json()["job"]
        return answer if answer["status"] in ("succeeded", "failed") else None

    answer = eventually(done, seconds=60)
    assert answer and answer["status"] == "succeeded", answer
    return answer


def export_of(client: httpx.Client, project_id: int) -> bytes:
    job = finished(client, client.post(f"/api/v1/projects/{project_id}/exports").json()["job"])
    with client.stream("GET", job["download_url"]) as download:
        assert (download.status_code, download.headers["content-type"]) == (200, "application/zip")
        return b"".join(download.iter_bytes())


def imported(client: httpx.Client, content: bytes, name: str) -> dict:
    answer = client.post("/api/v1/imports", files={"file": ("export.zip", content)},
                         data={"source": "tracker", "name": name})
    assert answer.status_code == 202, answer.text
    return finished(client, answer.json()["job"])


def without_ids(value):
    if isinstance(value, dict):
        return {key: without_ids(item) for key, item in value.items() if key not in VOLATILE}
    if isinstance(value, list):
        return [without_ids(item) for item in value]
    return value


def manifest(content: bytes) -> dict:
    data = json.loads(zipfile.ZipFile(io.BytesIO(content)).read("project.json"))
    data["project"] = {key: data["project"][key] for key in ("description", "estimation_mode", "docs_enabled")}
    return without_ids(data)


@pytest.fixture(scope="module")
def make_run(tmp_path_factory):
    database = tmp_path_factory.mktemp("make-run") / "db.sqlite3"
    server = DaphneServer({"DATABASE_URL": f"sqlite:///{database}", "REDIS_URL": "", "CELERY_BROKER_URL": "",
                           "MEDIA_ROOT": str(tmp_path_factory.mktemp("media")), "IMPORT_MAX_BYTES": "5000000"})
    subprocess.run([sys.executable, "manage.py", "migrate", "--no-input"], cwd=ROOT, env=server.env, check=True,
                   capture_output=True)
    with server:
        server.manage("createuser", "ada")
        yield server


def test_the_round_trip_on_the_web_process_alone(make_run):
    token = make_run.manage("issuetoken", "ada")
    with httpx.Client(base_url=make_run.url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as client:
        project = client.post("/api/v1/projects", json={"name": "Apollo", "prefix": "APL"}).json()["project"]["id"]
        for title in ("Launch", "=1+1 is not a formula here", "Land"):
            client.post(f"/api/v1/projects/{project}/tickets", json={"title": title, "checklist": ["a", "b"]})
        first = client.get(f"/api/v1/projects/{project}/tickets/1").json()["ticket"]["id"]
        client.post(f"/api/v1/projects/{project}/tickets/1/comments", json={"comment": "Go"})
        client.post(f"/api/v1/tickets/{first}/attachments", files={"files[]": ("plan.txt", b"the plan")})
        client.post(f"/api/v1/tickets/{first}/blockers", json={"blocker_ticket_id": first + 1})
        original = export_of(client, project)
        copy = imported(client, original, "Apollo again")
        assert copy["report"]["created"]["tickets"] == 3
        assert manifest(export_of(client, copy["project_id"])) == manifest(original)


def test_an_upload_over_the_limit_is_refused_before_it_is_read(make_run):
    """By the Procfile's server (daphne, make run's, reads a whole body before the application sees it)."""
    token = make_run.manage("issuetoken", "ada")
    with ProcfileServer({key: make_run.env[key] for key in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL",
                                                              "MEDIA_ROOT", "IMPORT_MAX_BYTES")}) as server:
        answer = _announce_a_body_and_send_none(server, token)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b"request body too large" in answer


def _announce_a_body_and_send_none(server, token: str) -> bytes:
    head = (f"POST /api/v1/imports HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
            f"Content-Type: multipart/form-data; boundary=x\r\nContent-Length: 50000000\r\n\r\n").encode()
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as connection:
        connection.sendall(head)  # and not a byte of the body
        answer = b""
        while not answer.endswith(b"}"):  # the head and the JSON body may come in separate reads
            chunk = connection.recv(65536)
            if not chunk:
                break
            answer += chunk
        return answer
