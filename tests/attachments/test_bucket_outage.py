"""A bucket out of reach (decisions.md, "availability limits"): every call to it has time limits and one
retry, a download or an upload then answers 503 with Retry-After and records nothing, a delete still
deletes its record (the object is left, logged). Against moto's standalone server, then a port that refuses
connections or one that accepts them and never answers."""

import socket
import time

import pytest
from django.core.files.storage import default_storage

from tests import sample_files as samples
from tests.factories import TicketFactory
from tests.tickets.test_attachments import PNG, delete_url, download_url, multipart, stored_files, upload_url
from tickets.models import Attachment

pytestmark = pytest.mark.usefixtures("bucket")

OUT_OF_REACH = {"error": "the file storage is out of reach, try again shortly", "code": "unavailable"}
TIMEOUT = 0.3


@pytest.fixture
def ticket(project, manager):
    return TicketFactory(project=project, created_by=manager)


def test_every_call_to_the_bucket_has_time_limits_and_one_retry(settings):
    settings.AWS_S3_CONNECT_TIMEOUT, settings.AWS_S3_READ_TIMEOUT = 1.5, 4.0
    settings.STORAGES = {**settings.STORAGES}  # a new storage, built with them
    config = default_storage.connection.meta.client.meta.config
    assert (config.connect_timeout, config.read_timeout, config.retries) == (
        1.5, 4.0, {"mode": "standard", "total_max_attempts": 2})


@pytest.fixture(params=["refusing", "hanging"])
def out_of_reach(request, settings):
    """Call it to put the bucket out of reach: it then refuses connections (a port nobody listens on), or
    accepts them and never answers (a listening socket never accepted from: the kernel completes the
    handshakes). Returns the seconds a request may take at most: two attempts of TIMEOUT each, the back-off
    between them and the request's own work on a busy machine, far below the minute each attempt could wait
    without the limits."""

    def go() -> float:
        listener = socket.create_server(("127.0.0.1", 0), backlog=64)
        request.addfinalizer(listener.close)
        port = listener.getsockname()[1]
        if request.param == "refusing":
            listener.close()
        settings.AWS_S3_ENDPOINT_URL = f"http://127.0.0.1:{port}"
        settings.AWS_S3_CONNECT_TIMEOUT = settings.AWS_S3_READ_TIMEOUT = TIMEOUT
        settings.STORAGES = {**settings.STORAGES}  # a new storage, on that endpoint
        return 2 * TIMEOUT + 8

    return go


def test_a_download_from_a_bucket_out_of_reach_is_a_503(client_for, editor, viewer, ticket, out_of_reach):
    client_for(editor).post(upload_url(ticket), **multipart(("shot.png", PNG)))
    within = out_of_reach()
    started = time.monotonic()
    response = client_for(viewer).get(download_url(Attachment.objects.get()))
    assert (response.status_code, response.json(), response["Retry-After"]) == (503, OUT_OF_REACH, "1")
    assert time.monotonic() - started < within


def test_an_upload_to_a_bucket_out_of_reach_is_a_503_and_records_nothing(client_for, editor, ticket, out_of_reach,
                                                                         settings):
    within = out_of_reach()
    started = time.monotonic()
    response = client_for(editor).post(upload_url(ticket), **multipart(("shot.png", PNG), ("scan.pdf", samples.PDF)))
    assert (response.status_code, response.json(), response["Retry-After"]) == (503, OUT_OF_REACH, "1")
    assert time.monotonic() - started < 2 * within  # the first file's attempts, then its removal's
    assert (Attachment.objects.exists(), stored_files(settings)) == (False, [])


def test_a_delete_with_the_bucket_out_of_reach_deletes_the_record_and_logs_the_object_left(
        client_for, editor, ticket, bucket, out_of_reach, django_capture_on_commit_callbacks, caplog):
    client_for(editor).post(upload_url(ticket), **multipart(("shot.png", PNG)))
    attachment = Attachment.objects.get()
    out_of_reach()
    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(editor).post(delete_url(attachment))
    assert (response.status_code, response.json()) == (200, {"ok": True})
    assert not Attachment.objects.exists()
    assert bucket.keys() == [attachment.file.name]
    assert f"stored file {attachment.file.name} left behind" in caplog.text
