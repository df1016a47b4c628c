"""Attachments over HTTP: upload to a ticket or a comment, download, delete; refusals store nothing."""

from pathlib import Path
from urllib.parse import quote

import pytest
from django.core.files.storage import FileSystemStorage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import IntegrityError
from django.utils import timezone

from attachments.files import SANDBOX
from attachments.uploads import MAX_FILE_SIZE, accepted_upload
from projects.roles import Role
from tests import sample_files as samples
from tests.factories import TicketFactory
from tickets import history, services
from tickets.models import Activity, Attachment, Comment

from .conftest import ticket_url

PNG = samples.png()


def upload_url(ticket) -> str:
    return f"/api/v1/tickets/{ticket.id}/attachments"


def comment_upload_url(comment) -> str:
    return f"/api/v1/reactions/{comment.id}/attachments"


def download_url(attachment) -> str:
    return f"/api/v1/attachments/{attachment.id}"


def delete_url(attachment) -> str:
    return f"/api/v1/attachments/{attachment.id}/delete"


def multipart(*files: tuple[str, bytes]) -> dict:
    """A body built by hand, so file names reach the server exactly as given (the test client shortens paths)."""
    boundary = "tracker-test-boundary"
    parts = [
        (f'--{boundary}\r\nContent-Disposition: form-data; name="files[]"; filename*=UTF-8\'\'{quote(name)}\r\n'
         "Content-Type: application/octet-stream\r\n\r\n").encode() + content + b"\r\n"
        for name, content in files
    ]
    return {"data": b"".join(parts) + f"--{boundary}--\r\n".encode(),
            "content_type": f"multipart/form-data; boundary={boundary}"}


def stored_files(settings) -> list[str]:
    root = Path(settings.MEDIA_ROOT)
    return sorted(path.relative_to(root).as_posix() for path in root.rglob("*") if path.is_file())


def attach(ticket, actor, name="shot.png", content=PNG, comment=None) -> Attachment:
    """An attachment stored by the real service."""
    uploads = [accepted_upload(SimpleUploadedFile(name, content))]
    [attachment] = services.attach_files(ticket=ticket, comment=comment, uploads=uploads, actor=actor)
    return attachment


def shape(attachment) -> dict:
    return {"id": attachment.id, "ticket_id": attachment.ticket_id, "original_name": attachment.original_name,
            "filesize": attachment.filesize, "mime_type": attachment.mime_type}


def assert_nothing_stored(settings):
    assert not Attachment.objects.exists()
    assert stored_files(settings) == []
    assert not Activity.objects.filter(action="attachments_added").exists()


def third_file_fails_to_save(monkeypatch):
    save, saved = FileSystemStorage._save, []

    def save_two_then_fail(storage, name, content):
        if len(saved) == 2:
            raise OSError("disk full")
        saved.append(name)
        return save(storage, name, content)

    monkeypatch.setattr(FileSystemStorage, "_save", save_two_then_fail)


def database_write_fails(monkeypatch):
    def fail(**kwargs):
        raise IntegrityError("connection lost")

    monkeypatch.setattr(history, "record", fail)


@pytest.fixture
def comment(ticket, member_with):
    return Comment.objects.create(ticket=ticket, author=member_with(Role.VIEWER), message="See the screenshot")


class TestUploadToTicket:
    def test_stores_every_file_under_a_generated_name(self, client_for, editor, ticket, settings):
        response = client_for(editor).post(upload_url(ticket), {"files[]": [
            SimpleUploadedFile("Screen shot.png", PNG), SimpleUploadedFile("scan.pdf", samples.PDF)]},
            format="multipart")

        first, second = Attachment.objects.order_by("id")
        assert (response.status_code, response.json()) == (200, {"ok": True, "attachments": [
            {"id": first.id, "ticket_id": ticket.id, "original_name": "Screen shot.png", "filesize": len(PNG),
             "mime_type": "image/png"},
            {"id": second.id, "ticket_id": ticket.id, "original_name": "scan.pdf", "filesize": len(samples.PDF),
             "mime_type": "application/pdf"}]})
        assert (first.comment, first.uploaded_by, second.uploaded_by) == (None, editor, editor)
        assert first.file.name != second.file.name
        assert [Path(name).suffix for name in (first.file.name, second.file.name)] == [".png", ".pdf"]
        assert stored_files(settings) == sorted([first.file.name, second.file.name])
        assert all(len(Path(name).stem) == 32 for name in stored_files(settings))
        assert Path(settings.MEDIA_ROOT, first.file.name).read_bytes() == PNG
        activity = Activity.objects.get(ticket=ticket)
        assert (activity.action, activity.actor, activity.changes) == ("attachments_added", editor, {
            "attachments": {"old": None, "new": [{"id": first.id, "name": "Screen shot.png"},
                                                 {"id": second.id, "name": "scan.pdf"}]}})

    @pytest.mark.parametrize(("extension", "sample"), samples.ACCEPTED.items())
    def test_every_accepted_type(self, client_for, editor, ticket, extension, sample):
        content, mime_type = sample
        response = client_for(editor).post(upload_url(ticket), **multipart((f"file.{extension}", content)))
        assert (response.status_code, response.json()["attachments"][0]["mime_type"]) == (200, mime_type)
        assert Attachment.objects.get().file.read() == content

    @pytest.mark.parametrize(("role", "expected"), [
        (Role.VIEWER, 403), (Role.CONTRIBUTOR, 403), (Role.EDITOR, 200), (Role.DEVELOPER, 200), (Role.MANAGER, 200)])
    def test_role_ladder(self, client_for, member_with, ticket, settings, role, expected):
        response = client_for(member_with(role)).post(upload_url(ticket), **multipart(("shot.png", PNG)))
        assert response.status_code == expected
        assert Attachment.objects.count() == len(stored_files(settings)) == (expected == 200)

    def test_unreachable_tickets(self, client_for, anonymous, editor, outsider, ticket, settings):
        deleted = TicketFactory(project=ticket.project, deleted_at=timezone.now())
        body = multipart(("shot.png", PNG))
        assert anonymous.post(upload_url(ticket), **body).status_code == 401
        assert client_for(outsider).post(upload_url(ticket), **body).status_code == 404
        assert client_for(editor).post("/api/v1/tickets/999999/attachments", **body).status_code == 404
        assert client_for(editor).post(upload_url(deleted), **body).status_code == 404
        assert_nothing_stored(settings)

    def test_archived_ticket_is_422_and_keeps_no_file(self, client_for, editor, ticket, settings):
        ticket.archived_at = timezone.now()
        ticket.save()
        response = client_for(editor).post(upload_url(ticket), **multipart(("shot.png", PNG), ("scan.pdf", samples.PDF)))
        assert (response.status_code, response.json()) == (422, {
            "code": "validation_failed", "error": "ticket is archived: unarchive it first"})
        assert_nothing_stored(settings)

    @pytest.mark.parametrize("body", [{}, {"files": "shot.png"}])
    def test_files_are_required(self, client_for, editor, ticket, settings, body):
        response = client_for(editor).post(upload_url(ticket), body, format="multipart")
        assert (response.status_code, response.json()) == (422, {
            "code": "validation_failed", "error": "files is required", "field": "files"})
        assert_nothing_stored(settings)

    def test_twenty_files_at_most(self, client_for, editor, ticket, settings):
        files = [(f"note{n}.txt", b"note") for n in range(21)]
        api = client_for(editor)
        response = api.post(upload_url(ticket), **multipart(*files))
        assert (response.status_code, response.json()) == (
            422, {"code": "validation_failed", "error": "files: at most 20 files per request", "field": "files"})
        assert_nothing_stored(settings)
        assert len(api.post(upload_url(ticket), **multipart(*files[:20])).json()["attachments"]) == 20

    def test_ten_megabytes_at_most(self, client_for, editor, ticket, settings):
        api = client_for(editor)
        response = api.post(upload_url(ticket), **multipart(("big.txt", b"x" * (MAX_FILE_SIZE + 1))))
        assert (response.status_code, response.json()) == (
            422, {"code": "validation_failed", "error": "files: big.txt: is larger than 10 MB", "field": "files"})
        assert_nothing_stored(settings)
        response = api.post(upload_url(ticket), **multipart(("fits.txt", b"x" * MAX_FILE_SIZE)))
        assert response.json()["attachments"][0]["filesize"] == MAX_FILE_SIZE

    @pytest.mark.parametrize(("name", "content", "error"), [
        ("cat.png", samples.ELF, "files: cat.png: is an executable"),
        ("cat.pdf", samples.ELF, "files: cat.pdf: is an executable"),
        ("cat.txt", samples.ELF, "files: cat.txt: is an executable"),
        ("cat.png", samples.WINDOWS_EXE, "files: cat.png: is an executable"),
        ("cat.pdf", samples.WINDOWS_EXE, "files: cat.pdf: is an executable"),
        ("cat.txt", samples.WINDOWS_EXE, "files: cat.txt: is an executable"),
        ("cat.jpg", samples.MACH_O, "files: cat.jpg: is an executable"),
        ("notes.txt", samples.SHELL_SCRIPT, "files: notes.txt: is a script"),
        ("notes.txt", samples.HTML, "files: notes.txt: is HTML, SVG or XML markup"),
        ("page.html", samples.HTML, "files: page.html: files of type .html are not accepted"),
        ("logo.svg", samples.SVG, "files: logo.svg: files of type .svg are not accepted"),
        ("logo.png", samples.SVG, "files: logo.png: is HTML, SVG or XML markup"),
        ("logo.txt", samples.XML_SVG, "files: logo.txt: is HTML, SVG or XML markup"),
        ("photo.jpg", PNG, "files: photo.jpg: content does not match its extension"),
        ("report.docx", samples.PDF, "files: report.docx: content does not match its extension"),
        ("setup.exe", samples.WINDOWS_EXE, "files: setup.exe: files of type .exe are not accepted"),
        ("app.js", b"alert(1)", "files: app.js: files of type .js are not accepted"),
    ])
    def test_hostile_files_are_refused(self, client_for, editor, ticket, settings, name, content, error):
        response = client_for(editor).post(upload_url(ticket), **multipart((name, content)))
        assert (response.status_code, response.json()) == (422, {
            "code": "validation_failed", "error": error, "field": "files"})
        assert_nothing_stored(settings)

    def test_one_refused_file_refuses_the_request(self, client_for, editor, ticket, settings):
        response = client_for(editor).post(upload_url(ticket), **multipart(
            ("shot.png", PNG), ("scan.pdf", samples.PDF), ("invoice.pdf", samples.WINDOWS_EXE), ("notes.txt", b"ok")))
        assert (response.status_code, response.json()["error"]) == (422, "files: invoice.pdf: is an executable")
        assert_nothing_stored(settings)

    @pytest.mark.parametrize("breaking", [third_file_fails_to_save, database_write_fails])
    def test_a_failure_midway_removes_the_files_already_saved(self, client_for, editor, ticket, settings,
                                                             monkeypatch, breaking):
        breaking(monkeypatch)
        response = client_for(editor).post(upload_url(ticket), **multipart(
            ("one.png", PNG), ("two.pdf", samples.PDF), ("three.txt", b"three")))
        assert (response.status_code, response.json()) == (500, {
            "code": "server_error", "error": "internal server error"})
        assert_nothing_stored(settings)

    @pytest.mark.parametrize(("sent", "shown"), [
        ("../../etc/passwd.txt", "passwd.txt"),
        ("C:\\Users\\ada\\shot.png", "shot.png"),
        ('Bericht "final"\r\nÜbersicht.txt', "Bericht finalÜbersicht.txt"),
    ])
    def test_a_path_in_the_name_is_reduced_to_its_last_part(self, client_for, editor, ticket, settings, sent, shown):
        content = PNG if sent.endswith(".png") else b"notes"
        response = client_for(editor).post(upload_url(ticket), **multipart((sent, content)))
        attachment = Attachment.objects.get()
        assert (response.status_code, attachment.original_name) == (200, shown)
        assert stored_files(settings) == [attachment.file.name]
        assert attachment.file.name.startswith("attachments/") and shown not in attachment.file.name


class TestUploadToComment:
    def test_the_author_attaches_to_the_comment_and_its_ticket(self, client_for, ticket, comment, settings):
        response = client_for(comment.author).post(comment_upload_url(comment), **multipart(("shot.png", PNG)))
        attachment = Attachment.objects.get()
        assert (response.status_code, response.json()) == (200, {"ok": True, "attachments": [shape(attachment)]})
        assert (attachment.ticket, attachment.comment, attachment.uploaded_by) == (ticket, comment, comment.author)
        assert stored_files(settings) == [attachment.file.name]
        assert Activity.objects.get(ticket=ticket).action == "attachments_added"

    @pytest.mark.parametrize(("role", "expected"), [
        (Role.VIEWER, 403), (Role.CONTRIBUTOR, 403), (Role.EDITOR, 200), (Role.DEVELOPER, 200), (Role.MANAGER, 200)])
    def test_others_need_editor(self, client_for, member_with, comment, settings, role, expected):
        response = client_for(member_with(role)).post(comment_upload_url(comment), **multipart(("shot.png", PNG)))
        assert response.status_code == expected
        assert Attachment.objects.count() == len(stored_files(settings)) == (expected == 200)

    def test_unreachable_comments(self, client_for, anonymous, manager, outsider, ticket, comment, settings):
        body = multipart(("shot.png", PNG))
        assert anonymous.post(comment_upload_url(comment), **body).status_code == 401
        assert client_for(outsider).post(comment_upload_url(comment), **body).status_code == 404
        assert client_for(manager).post("/api/v1/reactions/999999/attachments", **body).status_code == 404
        deleted = Comment.objects.create(ticket=ticket, author=manager, message="gone", deleted_at=timezone.now())
        assert client_for(manager).post(comment_upload_url(deleted), **body).json() == {
            "code": "not_found", "error": "comment not found"}
        on_deleted_ticket = Comment.objects.create(
            ticket=TicketFactory(project=ticket.project, deleted_at=timezone.now()), author=manager, message="x")
        assert client_for(manager).post(comment_upload_url(on_deleted_ticket), **body).status_code == 404
        assert_nothing_stored(settings)

    def test_archived_ticket_is_422(self, client_for, ticket, comment, settings):
        ticket.archived_at = timezone.now()
        ticket.save()
        response = client_for(comment.author).post(comment_upload_url(comment), **multipart(("shot.png", PNG)))
        assert (response.status_code, response.json()) == (422, {
            "code": "validation_failed", "error": "ticket is archived: unarchive it first"})
        assert_nothing_stored(settings)

    def test_refused_file(self, client_for, comment, settings):
        response = client_for(comment.author).post(comment_upload_url(comment), **multipart(("x.txt", samples.HTML)))
        assert (response.status_code, response.json()["error"]) == (422, "files: x.txt: is HTML, SVG or XML markup")
        assert_nothing_stored(settings)


class TestDownload:
    @pytest.mark.parametrize(("name", "content", "content_type", "disposition"), [
        ("shot.png", PNG, "image/png", 'inline; filename="shot.png"'),
        ("photo.jpeg", samples.JPEG, "image/jpeg", 'inline; filename="photo.jpeg"'),
        ("scan.pdf", samples.PDF, "application/pdf", 'inline; filename="scan.pdf"'),
        ("notes.txt", b"notes", "text/plain; charset=utf-8", 'attachment; filename="notes.txt"'),
        ("data.json", b"[]", "application/json", 'attachment; filename="data.json"'),
        ("report.docx", samples.DOCX, samples.ACCEPTED["docx"][1], 'attachment; filename="report.docx"'),
        ("archive.zip", samples.PLAIN_ZIP, "application/zip", 'attachment; filename="archive.zip"'),
    ])
    def test_headers_and_content(self, client_for, manager, viewer, ticket, name, content, content_type, disposition):
        attachment = attach(ticket, manager, name, content)
        response = client_for(viewer).get(download_url(attachment))
        assert response.status_code == 200
        assert b"".join(response.streaming_content) == content
        assert (response["Content-Type"], response["Content-Disposition"], response["Content-Length"],
                response["X-Content-Type-Options"]) == (content_type, disposition, str(len(content)), "nosniff")
        assert response.get("Content-Security-Policy") == (None if name.endswith(".pdf") else SANDBOX)

    def test_a_name_with_quotes_line_breaks_and_unicode(self, client_for, editor, ticket):
        client_for(editor).post(upload_url(ticket), **multipart(('Zeugnis "Müller"\r\n2024.pdf', samples.PDF)))
        attachment = Attachment.objects.get()
        assert attachment.original_name == "Zeugnis Müller2024.pdf"
        response = client_for(editor).get(download_url(attachment))
        assert response["Content-Disposition"] == (
            "inline; filename=\"Zeugnis M_ller2024.pdf\"; filename*=UTF-8''Zeugnis%20M%C3%BCller2024.pdf")

    def test_a_stored_name_is_sanitized_again(self, client_for, manager, ticket):
        attachment = attach(ticket, manager)
        Attachment.objects.filter(pk=attachment.pk).update(original_name='../x"\r\nSet-Cookie: a=b.png')
        response = client_for(manager).get(download_url(attachment))
        assert response["Content-Disposition"] == 'inline; filename="xSet-Cookie: a=b.png"'
        assert "Set-Cookie" not in response.headers

    @pytest.mark.parametrize("role", list(Role))
    def test_every_member_may_download(self, client_for, member_with, manager, ticket, role):
        attachment = attach(ticket, manager)
        assert client_for(member_with(role)).get(download_url(attachment)).status_code == 200

    def test_unreachable_attachments(self, client_for, anonymous, manager, outsider, ticket, comment):
        attachment = attach(ticket, manager)
        assert anonymous.get(download_url(attachment)).status_code == 401
        assert client_for(outsider).get(download_url(attachment)).status_code == 404
        assert client_for(manager).get("/api/v1/attachments/999999").status_code == 404
        of_deleted_comment = attach(ticket, manager, comment=comment)
        comment.deleted_at = timezone.now()
        comment.save()
        assert client_for(manager).get(download_url(of_deleted_comment)).status_code == 404
        ticket.deleted_at = timezone.now()
        ticket.save()
        assert client_for(manager).get(download_url(attachment)).status_code == 404

    def test_a_file_removed_under_its_record_is_a_404(self, client_for, manager, ticket):
        """A download that read the record just before a deletion committed finds its file gone (the deletion
        removes it after commit): the attachment is not found, not a 500."""
        attachment = attach(ticket, manager)
        attachment.file.storage.delete(attachment.file.name)
        response = client_for(manager).get(download_url(attachment))
        assert (response.status_code, response.json()) == (404, {"error": "attachment not found", "code": "not_found"})

    def test_archived_tickets_attachments_can_be_read(self, client_for, manager, viewer, ticket):
        attachment = attach(ticket, manager)
        ticket.archived_at = timezone.now()
        ticket.save()
        assert client_for(viewer).get(download_url(attachment)).status_code == 200


class TestDelete:
    def test_removes_the_record_and_then_the_stored_file(self, client_for, editor, ticket, settings,
                                                         django_capture_on_commit_callbacks):
        attachment = attach(ticket, editor)
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            response = client_for(editor).post(delete_url(attachment))
        assert (response.status_code, response.json()) == (200, {"ok": True})
        assert not Attachment.objects.exists()
        assert stored_files(settings) == [attachment.file.name]  # until the deletion commits
        for callback in callbacks:
            callback()
        assert stored_files(settings) == []
        activity = Activity.objects.get(ticket=ticket, action="attachment_deleted")
        assert (activity.actor, activity.changes) == (editor, {"attachments": {
            "old": [{"id": attachment.id, "name": "shot.png"}], "new": None}})
        assert client_for(editor).post(delete_url(attachment)).status_code == 404

    @pytest.mark.parametrize(("who", "expected"), [
        ("uploader", 200), ("ticket creator", 200), ("manager", 200), ("other editor", 403), ("viewer", 403)])
    def test_uploader_ticket_creator_or_manager(self, client_for, member_with, manager, project, settings,
                                                django_capture_on_commit_callbacks, who, expected):
        uploader, creator = member_with(Role.EDITOR), member_with(Role.CONTRIBUTOR)
        ticket = TicketFactory(project=project, created_by=creator)
        attachment = attach(ticket, uploader)
        caller = {"uploader": uploader, "ticket creator": creator, "manager": manager,
                  "other editor": member_with(Role.EDITOR), "viewer": member_with(Role.VIEWER)}[who]
        with django_capture_on_commit_callbacks(execute=True):
            response = client_for(caller).post(delete_url(attachment))
        assert response.status_code == expected
        assert Attachment.objects.exists() == (expected == 403)
        assert len(stored_files(settings)) == (expected == 403)

    def test_a_viewer_deletes_what_they_attached_to_their_comment(self, client_for, ticket, comment, settings,
                                                                   django_capture_on_commit_callbacks):
        attachment = attach(ticket, comment.author, comment=comment)
        with django_capture_on_commit_callbacks(execute=True):
            assert client_for(comment.author).post(delete_url(attachment)).status_code == 200
        assert stored_files(settings) == []

    def test_unreachable_or_archived(self, client_for, anonymous, manager, outsider, ticket, settings,
                                     django_capture_on_commit_callbacks):
        attachment = attach(ticket, manager)
        with django_capture_on_commit_callbacks(execute=True):
            assert anonymous.post(delete_url(attachment)).status_code == 401
            assert client_for(outsider).post(delete_url(attachment)).status_code == 404
            ticket.archived_at = timezone.now()
            ticket.save()
            response = client_for(manager).post(delete_url(attachment))
            assert (response.status_code, response.json()) == (
                422, {"code": "validation_failed", "error": "ticket is archived: unarchive it first"})
            ticket.deleted_at = timezone.now()
            ticket.save()
            assert client_for(manager).post(delete_url(attachment)).status_code == 404
        assert Attachment.objects.count() == len(stored_files(settings)) == 1


def test_ticket_detail_lists_the_attachments(client_for, manager, viewer, ticket, comment):
    on_ticket = attach(ticket, manager, "scan.pdf", samples.PDF)
    on_comment = attach(ticket, comment.author, comment=comment)
    gone = Comment.objects.create(ticket=ticket, author=manager, message="x")
    attach(ticket, manager, comment=gone)
    gone.deleted_at = timezone.now()
    gone.save()

    response = client_for(viewer).get(ticket_url(ticket))
    assert response.json()["ticket"]["attachments"] == [shape(on_ticket), shape(on_comment)]
