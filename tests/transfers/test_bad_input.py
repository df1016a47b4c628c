"""Bad input: a file plainly not of its source's format is a 422 at once; anything wrong deeper in it fails the
job with an error saying where, and writes nothing (no project, no ticket, no stored file)."""

import io
import json
import zipfile

import pytest

from projects.models import Project
from tickets.models import Ticket
from transfers.models import Job

from .conftest import IMPORTS, sample


def stored_files(settings) -> list[str]:
    root = settings.MEDIA_ROOT
    return sorted(str(path.relative_to(root)) for path in root.rglob("*") if path.is_file()) if root.exists() else []


@pytest.mark.parametrize(("source", "content", "error"), [
    ("trello", b"Summary,Issue key\nx,A-1\n", "file: not a JSON object (Trello's board export)"),
    ("trello", b"[]", "file: not a JSON object (Trello's board export)"),
    ("github", b'{"number": 1}', "file: not a JSON array of issues"),
    ("tracker", b'{"format": "tracker-export"}', "file: not a zip archive (our export)"),
    ("jira", b"\x89PNG\r\n\x1a\n\0\0", "file: not a CSV file whose header row has a Summary column (Jira's export)"),
    ("jira", b"Key,Title\nA-1,x\n", "file: not a CSV file whose header row has a Summary column (Jira's export)"),
])
def test_a_file_plainly_not_of_its_format_is_refused_at_once(start_import, manager, settings, source, content, error):
    answer = start_import(manager, content, filename="upload", source=source, name="New one")
    assert (answer.status_code, answer.json()["error"], answer.json()["field"]) == (422, error, "file")
    assert (Job.objects.count(), Project.objects.count(), stored_files(settings)) == (0, 1, [])


@pytest.mark.parametrize(("fields", "error"), [
    ({"source": "asana", "name": "New one"}, 'source: "asana" is not a valid choice.'),
    ({"source": "trello"}, "project_id: give either project_id or name"),
    ({"source": "trello", "name": "New one", "project_id": 1}, "project_id: give either project_id or name, not both"),
    ({"source": "trello", "name": "X"}, "name: Ensure this field has at least 2 characters."),
    ({"source": "trello", "name": "New one", "prefix": "a-b"}, "prefix: must be 1 to 10 letters or digits"),
])
def test_bad_fields_are_refused_at_once(start_import, manager, settings, fields, error):
    answer = start_import(manager, b"{}", filename="board.json", **fields)
    assert (answer.status_code, answer.json()["error"]) == (422, error)
    assert (Job.objects.count(), stored_files(settings)) == (0, [])


def test_a_missing_file_is_refused(client_for, manager):
    answer = client_for(manager).post(IMPORTS, {"source": "trello", "name": "New one"}, format="multipart")
    assert (answer.status_code, answer.json()["error"]) == (422, "file is required")
    assert not Job.objects.exists()


def test_a_file_over_the_limit_is_413(start_import, manager, settings):
    settings.IMPORT_MAX_BYTES = 10
    answer = start_import(manager, b'{"cards": []}', filename="board.json", source="trello", name="New one")
    assert (answer.status_code, answer.json()["error"]) == (413, "file: larger than 10 bytes")
    assert (Job.objects.count(), stored_files(settings)) == (0, [])


def failed(start_import, run_jobs, user, content: bytes, *, source: str, **fields) -> Job:
    assert start_import(user, content, filename="upload", source=source, **fields).status_code == 202
    [job] = run_jobs()
    assert job.status == "failed"
    return job


def zipped(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def board_with(**changes) -> bytes:
    board = json.loads(sample("trello-board.json"))
    board.update(changes)
    return json.dumps(board).encode()


@pytest.mark.parametrize(("source", "content", "error"), [
    ("trello", board_with(cards=[{"id": "c1", "name": "Lost", "idList": "nowhere"}]), "cards[0].idList: no such list"),
    ("trello", sample("trello-board.json")[:3000], "lists: not valid JSON"),
    ("trello", board_with(cards=[{"id": "c1", "name": ["not", "text"], "idList": "65f0a1b2c3d4e5f6000000a1"}]),
     "cards[0].name: text expected, not list"),
    ("github", b'[{"number": 1, "title": "x", "state": "open", "labels": "bug"}]',
     "[0] (#1).labels: an object expected, not str"),
    ("jira", b'Summary,Issue key\nfine,A-1\n"bad"row,A-2\n', "row 3: ',' expected after '\"'"),
    ("jira", b"Summary,Issue key\nfine,A-1\n\xff\xfe,A-2\n", "file: not UTF-8 text (invalid start byte)"),
    ("tracker", zipped({"attachments/../../evil.sh": b"rm -rf /", "project.json": b"{}"}),
     "zip: 'attachments/../../evil.sh': a path that leaves the archive"),
    ("tracker", zipped({"/etc/passwd": b"x"}), "zip: '/etc/passwd': a path that leaves the archive"),
    ("tracker", zipped({"tickets.csv": b"number\n"}), "zip: no project.json"),
    ("tracker", zipped({"project.json": b'{"format": "trello", "version": 1}'}),
     "project.json: not a tracker-export of version 1 (format 'trello', version 1)"),
    ("tracker", zipped({"project.json": b"\0" * (5 * 1024 * 1024)}), "zip: its members would unpack to 5,242,880 bytes"),
])
def test_what_is_wrong_inside_fails_the_job_saying_where(start_import, run_jobs, manager, settings, source, content,
                                                         error):
    job = failed(start_import, run_jobs, manager, content, source=source, name="New one")
    assert job.error.startswith(error), job.error
    assert (job.project_id, Project.objects.count(), Ticket.objects.count()) == (None, 1, 0)
    assert stored_files(settings) == []  # the upload is gone too


def test_a_zip_past_the_unpacked_limit_fails(start_import, run_jobs, manager, settings):
    settings.IMPORT_MAX_UNPACKED_BYTES = 1000
    job = failed(start_import, run_jobs, manager, zipped({"project.json": b" " * 2000}), source="tracker",
                 name="New one")
    assert job.error == "zip: its members would unpack to 2,000 bytes, more than the 1,000 allowed for a zip of " \
                        f"{len(zipped({'project.json': b' ' * 2000})):,} bytes"


def test_an_existing_project_keeps_what_it_had(start_import, run_jobs, project, manager, settings, people):
    board = json.loads(sample("trello-board.json"))
    board["cards"].append({"id": "c9", "name": "Lost", "idList": "nowhere"})
    before = (Ticket.objects.filter(project=project).count(), project.statuses.count(), project.tags.count())
    job = failed(start_import, run_jobs, manager, json.dumps(board).encode(), source="trello", project_id=project.pk)
    assert job.error == "cards[5].idList: no such list"
    assert (Ticket.objects.filter(project=project).count(), project.statuses.count(), project.tags.count()) == before
    assert project.memberships.count() == 1  # nobody matched became a viewer


def test_files_stored_before_a_failure_are_removed(client_for, start_import, run_jobs, manager, settings):
    from .projects import rich_project
    from .test_round_trip import exported

    source = rich_project(owner=manager)
    archive = zipfile.ZipFile(io.BytesIO(exported(client_for(manager), source, run_jobs)))
    manifest = json.loads(archive.read("project.json"))
    manifest["docs"]["articles"][0]["attachments"] = [{"id": 1, "name": "gone.md", "size": 3, "path": "nope.md"}]
    members = {info.filename: archive.read(info) for info in archive.infolist()}
    before = stored_files(settings)
    job = failed(start_import, run_jobs, manager, zipped({**members, "project.json": json.dumps(manifest).encode()}),
                 source="tracker", name="Copy")
    assert job.error == "docs.articles[0].attachments[0].path: no such file in the zip: nope.md"
    assert stored_files(settings) == before  # the ticket files it stored went with the failure
    assert Project.objects.count() == 2  # the fixture's and the exported one: no copy
