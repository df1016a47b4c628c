"""Stored files in an S3-compatible bucket (decisions.md, "Storage on S3-compatible servers"), against
moto's standalone server: uploads go to the bucket and nothing to the disk, downloads stream back from it
with the headers of a file on disk, deletes remove the object once they commit, a failed upload leaves
no object behind. Tickets and docs share the one implementation in attachments/."""

import threading

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from attachments.files import SANDBOX
from docs_area.models import ArticleAttachment
from tests import sample_files as samples
from tests.docs_area.test_attachments import attachment_url as docs_attachment_url
from tests.docs_area.test_attachments import upload_url as docs_upload_url
from tests.factories import ArticleFactory, TicketFactory
from tests.tickets.test_attachments import (
    PNG,
    database_write_fails,
    delete_url,
    download_url,
    multipart,
    stored_files,
    upload_url,
)
from tickets.models import Attachment

pytestmark = pytest.mark.usefixtures("bucket")


@pytest.fixture
def ticket(project, manager):
    return TicketFactory(project=project, created_by=manager)


def test_uploads_go_to_the_bucket_under_generated_names_and_nothing_to_the_disk(client_for, editor, ticket,
                                                                                bucket, settings):
    response = client_for(editor).post(upload_url(ticket), **multipart(("shot.png", PNG), ("scan.pdf", samples.PDF)))
    assert response.status_code == 200
    stored = {attachment.original_name: attachment.file.name for attachment in Attachment.objects.all()}
    assert bucket.keys() == sorted(stored.values())
    assert [bucket.read(stored["shot.png"]), bucket.read(stored["scan.pdf"])] == [PNG, samples.PDF]
    assert all(name.startswith("attachments/") and "shot" not in name for name in stored.values())
    assert stored_files(settings) == []


@pytest.mark.parametrize(("name", "content", "content_type", "disposition", "sandboxed"), [
    ("shot.png", PNG, "image/png", 'inline; filename="shot.png"', True),
    ("scan.pdf", samples.PDF, "application/pdf", 'inline; filename="scan.pdf"', False),
    ("notes.txt", b"notes " * 30_000, "text/plain; charset=utf-8", 'attachment; filename="notes.txt"', True),
])
def test_downloads_stream_from_the_bucket_with_the_headers_of_a_file_on_disk(
        client_for, editor, viewer, ticket, name, content, content_type, disposition, sandboxed):
    client_for(editor).post(upload_url(ticket), **multipart((name, content)))
    response = client_for(viewer).get(download_url(Attachment.objects.get()))
    assert (response.status_code, response.streaming) == (200, True)
    assert b"".join(response.streaming_content) == content
    assert (response["Content-Type"], response["Content-Disposition"], response["Content-Length"],
            response["X-Content-Type-Options"]) == (content_type, disposition, str(len(content)), "nosniff")
    assert response.get("Content-Security-Policy") == (SANDBOX if sandboxed else None)


def test_a_delete_removes_the_object_once_it_commits(client_for, editor, ticket, bucket,
                                                     django_capture_on_commit_callbacks):
    client_for(editor).post(upload_url(ticket), **multipart(("shot.png", PNG)))
    attachment = Attachment.objects.get()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client_for(editor).post(delete_url(attachment))
    assert (response.status_code, response.json()) == (200, {"ok": True})
    assert bucket.keys() == [attachment.file.name]  # until the deletion commits
    for callback in callbacks:
        callback()
    assert bucket.keys() == []


def test_an_object_gone_under_its_record_is_a_404(client_for, editor, ticket):
    client_for(editor).post(upload_url(ticket), **multipart(("shot.png", PNG)))
    attachment = Attachment.objects.get()
    default_storage.delete(attachment.file.name)
    response = client_for(editor).get(download_url(attachment))
    assert (response.status_code, response.json()) == (404, {"error": "attachment not found", "code": "not_found"})


def test_an_upload_whose_transaction_fails_leaves_no_object(client_for, editor, ticket, bucket, monkeypatch):
    database_write_fails(monkeypatch)
    response = client_for(editor).post(upload_url(ticket), **multipart(("shot.png", PNG), ("scan.pdf", samples.PDF)))
    assert (response.status_code, response.json()) == (500, {"code": "server_error", "error": "internal server error"})
    assert (Attachment.objects.exists(), bucket.keys()) == (False, [])


def test_docs_attachments_live_in_the_same_bucket(client_for, manager, viewer, project, bucket,
                                                  django_capture_on_commit_callbacks):
    article = ArticleFactory(project=project)
    response = client_for(manager).post(docs_upload_url(article), **multipart(("Diagram.png", PNG)))
    assert response.status_code == 200
    attachment = ArticleAttachment.objects.get()
    assert bucket.keys() == [attachment.file.name]
    download = client_for(viewer).get(docs_attachment_url(attachment))
    assert (b"".join(download.streaming_content), download["Cache-Control"]) == (PNG, "private")
    with django_capture_on_commit_callbacks(execute=True):
        assert client_for(manager).post(docs_attachment_url(attachment, "/delete")).status_code == 200
    assert bucket.keys() == []


def test_the_threads_of_a_process_share_one_s3_client(bucket):
    """Also the fence of boto3's `ServiceResource(client=...)` (attachments/storage.py): each thread has a
    resource of its own around the one client."""
    found = []

    def connect():
        found.append(default_storage.connection)

    threads = [threading.Thread(target=connect) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(connection) for connection in found}) == 3  # a resource per thread, as boto3 asks
    assert len({id(connection.meta.client) for connection in found}) == 1, (
        "boto3 no longer builds a resource around a given client: attachments/storage.py relies on it")


def test_an_opened_stored_file_carries_its_boto3_object_as_obj(bucket):
    """The fence of django-storages' undocumented `S3File.obj`, which downloads stream from."""
    name = default_storage.save("note.txt", ContentFile(b"streamed"))
    opened = default_storage.open(name)
    assert hasattr(opened, "obj"), "S3File.obj moved: attachments.storage.open_stream relies on it"
    assert opened.obj.get()["Body"].read() == b"streamed"


def test_a_file_opened_through_the_storage_is_held_on_the_disk_past_the_upload_memory_size(bucket, settings):
    """As an article's copy reads its sources: django-storages downloads the object before the first read."""
    name = default_storage.save("big.bin", ContentFile(b"x" * (settings.FILE_UPLOAD_MAX_MEMORY_SIZE + 1)))
    with default_storage.open(name) as opened:
        assert opened.read(3) == b"xxx"
        assert opened.file._rolled  # SpooledTemporaryFile: moved from memory to a temporary file
