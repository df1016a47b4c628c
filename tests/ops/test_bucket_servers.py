"""Two Procfile servers with separate MEDIA_ROOTs and one bucket (moto's standalone S3 server), black box:
each serves the other's uploads and nothing of a file stays on either disk; an upload request of 16 files
of 9.5 MB, and their 16 downloads at once, each add less than 100 MiB to the worker's memory."""

import hashlib
import http.client
import json
import os
import tempfile
import threading
from pathlib import Path

import pytest

from tests.factories import PASSWORD
from tests.security.procfile import ProcfileServer, server_program

pytestmark = pytest.mark.skipif(not server_program().exists(), reason="the Procfile's server is not installed")

MiB = 1024 * 1024
BOUNDARY = "tracker-fleet-boundary"
GZIP_HEAD = b"\x1f\x8b\x08\x00"  # what the upload policy sniffs a .gz file by


@pytest.fixture(scope="module")
def servers(s3_server, tmp_path_factory):
    folder = tmp_path_factory.mktemp("bucket-servers")
    bucket = s3_server.new_bucket()
    shared = {"DATABASE_URL": f"sqlite:///{folder / 'shared.sqlite3'}", "REDIS_URL": "", "WEB_CONCURRENCY": "1",
              **bucket.env()}
    with (ProcfileServer({**shared, "MEDIA_ROOT": str(folder / "media-a")}) as first,
          ProcfileServer({**shared, "MEDIA_ROOT": str(folder / "media-b")}) as second):
        first.manage("migrate", "--no-input")
        first.manage("createuser", "ada", "--password", PASSWORD)
        token = first.manage("issuetoken", "ada")
        project = first.post("/api/v1/projects", {"name": "Fleet", "prefix": "FLT"}, token)["project"]
        first.post(f"/api/v1/projects/{project['id']}/tickets", {"title": "Files"}, token)
        first.token = second.token = token
        connection, response = request(first, "GET", f"/api/v1/projects/{project['id']}/tickets/1")
        first.ticket_id = second.ticket_id = json.loads(response.read())["ticket"]["id"]
        connection.close()
        yield first, second, bucket, folder


def request(server, method: str, path: str, body=None, headers: dict | None = None):
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
    connection.request(method, path, body=body, headers={"Authorization": f"Bearer {server.token}", **(headers or {})})
    return connection, connection.getresponse()


def upload(server, files: list[tuple[str, Path]]) -> list[dict]:
    """A multipart body streamed from a temporary file, as a client sends a large upload."""
    with tempfile.TemporaryFile() as body:
        for name, path in files:
            body.write(f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="files[]"; filename="{name}"\r\n'
                       "Content-Type: application/octet-stream\r\n\r\n".encode())
            body.write(path.read_bytes())
            body.write(b"\r\n")
        body.write(f"--{BOUNDARY}--\r\n".encode())
        length = body.tell()
        body.seek(0)
        connection, response = request(server, "POST", f"/api/v1/tickets/{server.ticket_id}/attachments", body, {
            "Content-Type": f"multipart/form-data; boundary={BOUNDARY}", "Content-Length": str(length)})
        answer = response.read()
        connection.close()
    assert response.status == 200, answer[:2000]
    return json.loads(answer)["attachments"]


def download(server, attachment_id: int) -> tuple[int, dict, str]:
    """Status, headers and the SHA-256 of the body, read as it arrives."""
    connection, response = request(server, "GET", f"/api/v1/attachments/{attachment_id}")
    digest = hashlib.sha256()
    while chunk := response.read(MiB):
        digest.update(chunk)
    connection.close()
    return response.status, {name.lower(): value for name, value in response.getheaders()}, digest.hexdigest()


def files_on_disk(folder: Path) -> list[Path]:
    return [path for path in folder.rglob("*") if path.is_file() and "media-" in str(path)]


class WorkerMemory:
    """The peak resident memory of the server's one worker while the block runs, over what it held before."""

    def __init__(self, server):
        children = Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split()
        assert len(children) == 1, "WEB_CONCURRENCY=1: one worker"
        self.status = Path(f"/proc/{children[0]}/status")
        self.clear_refs = Path(f"/proc/{children[0]}/clear_refs")

    def kib(self, field: str) -> int:
        line = next(line for line in self.status.read_text().splitlines() if line.startswith(f"{field}:"))
        return int(line.split()[1])

    def __enter__(self) -> "WorkerMemory":
        self.clear_refs.write_text("5")  # the peak (VmHWM) starts again from what is resident now
        self.before = self.kib("VmRSS")
        return self

    def __exit__(self, *exc_info) -> None:
        self.added_mib = (self.kib("VmHWM") - self.before) / 1024


def test_each_server_serves_the_other_s_files_and_keeps_none_on_its_disk(servers, tmp_path):
    first, second, bucket, folder = servers
    (tmp_path / "notes.txt").write_bytes(b"written through the first server\n" * 1000)
    (attachment,) = upload(first, [("notes.txt", tmp_path / "notes.txt")])
    status, headers, digest = download(second, attachment["id"])
    assert (status, digest) == (200, hashlib.sha256((tmp_path / "notes.txt").read_bytes()).hexdigest())
    assert (headers["content-type"], headers["content-length"], headers["content-disposition"],
            headers["x-content-type-options"]) == ("text/plain; charset=utf-8", "33000",
                                                   'attachment; filename="notes.txt"', "nosniff")
    assert len(bucket.keys()) == 1 and files_on_disk(folder) == []

    connection, response = request(second, "POST", f"/api/v1/attachments/{attachment['id']}/delete")
    assert (response.status, json.loads(response.read())) == (200, {"ok": True})
    connection.close()
    assert bucket.keys() == []
    assert download(first, attachment["id"])[0] == 404


def test_a_152_mb_upload_and_its_downloads_each_add_less_than_100_mib(servers, tmp_path):
    first, second, bucket, folder = servers
    files = []
    for index in range(16):
        path = tmp_path / f"part-{index:02}.gz"
        path.write_bytes(GZIP_HEAD + os.urandom(int(9.5 * MiB) - len(GZIP_HEAD)))
        files.append((path.name, path))
    upload(second, [files[0]])  # the storage's client and the upload path are loaded before measuring
    with WorkerMemory(first) as uploading:
        attachments = upload(first, files)
    assert len(attachments) == 16 and files_on_disk(folder) == []

    expected = {attachment["id"]: hashlib.sha256(path.read_bytes()).hexdigest()
                for attachment, (_, path) in zip(attachments, files, strict=True)}
    download(second, attachments[0]["id"])
    answers = {}

    def fetch(attachment_id: int):
        answers[attachment_id] = download(second, attachment_id)

    with WorkerMemory(second) as downloading:
        threads = [threading.Thread(target=fetch, args=(attachment_id,)) for attachment_id in expected]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert {key: (status, digest) for key, (status, _, digest) in answers.items()} == {
        key: (200, digest) for key, digest in expected.items()}
    assert uploading.added_mib < 100, f"the upload added {uploading.added_mib:.0f} MiB"
    assert downloading.added_mib < 100, f"the downloads added {downloading.added_mib:.0f} MiB"
