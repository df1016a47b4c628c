"""Files on articles through the shared attachments/ flow: upload, download (private), delete, and copies."""

import tracemalloc
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from attachments.uploads import MAX_FILE_SIZE, accepted_upload
from docs_area import services
from docs_area.models import Article, ArticleAttachment
from tests import sample_files as samples
from tests.conftest import ROLES
from tests.factories import ArticleFactory, ProjectFactory
from tests.tickets.test_attachments import multipart, stored_files

from .conftest import WRITE_LADDER, docs_url

PNG = samples.png()


def upload_url(article) -> str:
    return docs_url(article.project, f"/articles/{article.id}/attachments")


def attachment_url(attachment, action: str = "") -> str:
    return docs_url(attachment.article.project, f"/attachments/{attachment.id}{action}")


def attach(article, actor, name="shot.png", content=PNG) -> ArticleAttachment:
    """An attachment stored by the real service."""
    [attachment] = services.attach_files(article=article, uploads=[accepted_upload(SimpleUploadedFile(name, content))],
                                         actor=actor)
    return attachment


def shape(attachment) -> dict:
    return {"id": attachment.id, "article_id": attachment.article_id, "original_name": attachment.original_name,
            "filesize": attachment.filesize, "mime_type": attachment.mime_type}


def assert_nothing_stored(settings):
    assert not ArticleAttachment.objects.exists()
    assert stored_files(settings) == []


class TestUpload:
    def test_stores_every_file(self, client_for, contributor, article, settings):
        response = client_for(contributor).post(upload_url(article), **multipart(("Diagram.png", PNG),
                                                                                 ("spec.pdf", samples.PDF)))
        first, second = ArticleAttachment.objects.order_by("id")
        assert (response.status_code, response.json()) == (200, {"success": True,
                                                                  "attachments": [shape(first), shape(second)]})
        assert (first.original_name, first.mime_type, first.uploaded_by) == ("Diagram.png", "image/png", contributor)
        assert stored_files(settings) == sorted([first.file.name, second.file.name])
        assert Path(settings.MEDIA_ROOT, second.file.name).read_bytes() == samples.PDF

    @pytest.mark.parametrize(("role", "allowed"), WRITE_LADDER)
    def test_role_ladder(self, client_for, member_with, article, settings, role, allowed):
        response = client_for(member_with(role)).post(upload_url(article), **multipart(("shot.png", PNG)))
        assert response.status_code == (200 if allowed else 403)
        assert ArticleAttachment.objects.count() == len(stored_files(settings)) == allowed

    @pytest.mark.parametrize(("files", "error"), [
        ([("logo.svg", samples.SVG)], "files: logo.svg: files of type .svg are not accepted"),
        ([("page.txt", samples.HTML)], "files: page.txt: is HTML, SVG or XML markup"),
        ([("ok.png", PNG), ("cat.png", samples.ELF)], "files: cat.png: is an executable"),
        ([("big.txt", b"x" * (MAX_FILE_SIZE + 1))], "files: big.txt: is larger than 10 MB"),
        ([(f"n{n}.txt", b"note") for n in range(21)], "files: at most 20 files per request"),
    ])
    def test_refused_files_store_nothing(self, client_for, editor, article, settings, files, error):
        response = client_for(editor).post(upload_url(article), **multipart(*files))
        assert (response.status_code, response.json()) == (422, {
            "code": "validation_failed", "error": error, "field": "files"})
        assert_nothing_stored(settings)

    def test_files_are_required(self, client_for, editor, article, settings):
        response = client_for(editor).post(upload_url(article), {}, format="multipart")
        assert (response.status_code, response.json()) == (422, {
            "code": "validation_failed", "error": "files is required", "field": "files"})
        assert_nothing_stored(settings)

    def test_an_article_holds_at_most_the_configured_number_of_files(self, client_for, editor, manager, article,
                                                                      settings):
        settings.DOCS_MAX_ATTACHMENTS_PER_ARTICLE = 3
        kept = [attach(article, manager, f"n{index}.txt", b"note") for index in range(2)]
        response = client_for(editor).post(upload_url(article), **multipart(("a.txt", b"a"), ("b.txt", b"b")))
        assert (response.status_code, response.json()) == (
            422, {
                "code": "validation_failed",
                "error": "files: an article holds at most 3 attachments", "field": "files"})
        assert list(ArticleAttachment.objects.order_by("id")) == kept
        assert stored_files(settings) == sorted(attachment.file.name for attachment in kept)
        assert client_for(editor).post(upload_url(article), **multipart(("a.txt", b"a"))).status_code == 200

    def test_a_json_body_is_415(self, client_for, editor, article, settings):
        response = client_for(editor).post(upload_url(article), {"files[]": "x"})
        assert response.status_code == 415 and "error" in response.json()
        assert_nothing_stored(settings)

    def test_unreachable(self, client_for, anonymous, outsider, editor, project, article, settings):
        deleted = ArticleFactory(project=project, deleted_at=timezone.now())
        body = multipart(("shot.png", PNG))
        assert anonymous.post(upload_url(article), **body).status_code == 401
        assert client_for(outsider).post(upload_url(article), **body).status_code == 404
        assert client_for(editor).post(upload_url(deleted), **body).status_code == 404
        assert_nothing_stored(settings)


class TestDownload:
    @pytest.mark.parametrize(("name", "content", "content_type", "disposition"), [
        ("shot.png", PNG, "image/png", 'inline; filename="shot.png"'),
        ("spec.pdf", samples.PDF, "application/pdf", 'inline; filename="spec.pdf"'),
        ("notes.txt", b"plain notes", "text/plain; charset=utf-8", 'attachment; filename="notes.txt"'),
    ])
    def test_headers_and_content(self, client_for, manager, viewer, article, name, content, content_type,
                                 disposition):
        attachment = attach(article, manager, name, content)
        response = client_for(viewer).get(attachment_url(attachment), HTTP_ACCEPT="text/html")
        assert response.status_code == 200
        assert b"".join(response.streaming_content) == content
        assert (response["Content-Type"], response["Content-Disposition"], response["Cache-Control"],
                response["X-Content-Type-Options"]) == (content_type, disposition, "private", "nosniff")

    @pytest.mark.parametrize("role", ROLES)
    def test_every_member(self, client_for, member_with, manager, article, role):
        attachment = attach(article, manager)
        assert client_for(member_with(role)).get(attachment_url(attachment)).status_code == 200

    def test_unreachable(self, client_for, anonymous, outsider, manager, project, article):
        attachment = attach(article, manager)
        on_deleted = attach(ArticleFactory(project=project), manager)
        Article.objects.filter(pk=on_deleted.article_id).update(deleted_at=timezone.now())
        foreign = attach(ArticleFactory(project=ProjectFactory()), manager)
        assert anonymous.get(attachment_url(attachment)).status_code == 401
        assert client_for(outsider).get(attachment_url(attachment)).json() == {
            "code": "not_found", "error": "project not found"}
        api = client_for(manager)
        for url in [attachment_url(on_deleted), docs_url(project, f"/attachments/{foreign.id}")]:
            response = api.get(url)
            assert (response.status_code, response.json()) == (404, {
                "code": "not_found", "error": "attachment not found"})


class TestDelete:
    def test_removes_the_record_and_then_the_file(self, client_for, contributor, manager, article, settings,
                                                  django_capture_on_commit_callbacks):
        attachment = attach(article, manager)
        kept = attach(article, manager, "kept.png")
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            response = client_for(contributor).post(attachment_url(attachment, "/delete"))
            assert (response.status_code, response.json()) == (200, {"success": True})
            assert stored_files(settings) == sorted([attachment.file.name, kept.file.name])  # until the commit
        for callback in callbacks:
            callback()
        assert list(ArticleAttachment.objects.all()) == [kept]
        assert stored_files(settings) == [kept.file.name]

    @pytest.mark.parametrize(("role", "allowed"), WRITE_LADDER)
    def test_role_ladder(self, client_for, member_with, manager, article, settings, role, allowed,
                         django_capture_on_commit_callbacks):
        attachment = attach(article, manager)
        with django_capture_on_commit_callbacks(execute=True):
            response = client_for(member_with(role)).post(attachment_url(attachment, "/delete"))
        assert response.status_code == (200 if allowed else 403)
        assert ArticleAttachment.objects.count() == len(stored_files(settings)) == (not allowed)

    def test_unreachable(self, client_for, anonymous, outsider, manager, article, settings):
        attachment = attach(article, manager)
        assert anonymous.post(attachment_url(attachment, "/delete")).status_code == 401
        assert client_for(outsider).post(attachment_url(attachment, "/delete")).status_code == 404
        assert client_for(manager).post(docs_url(article.project, "/attachments/999999/delete")).status_code == 404
        assert stored_files(settings) == [attachment.file.name]


class TestCopyArticle:
    def test_the_copy_owns_new_files_with_the_same_bytes(self, client_for, editor, manager, article, settings,
                                                         django_capture_on_commit_callbacks):
        originals = [attach(article, manager, "shot.png", PNG), attach(article, manager, "spec.pdf", samples.PDF)]

        response = client_for(editor).post(docs_url(article.project, f"/articles/{article.id}/copy"))

        copy = Article.objects.get(pk=response.json()["article"]["id"])
        copies = list(copy.attachments.order_by("id"))
        assert [(c.original_name, c.mime_type, c.filesize, c.uploaded_by) for c in copies] == [
            (o.original_name, o.mime_type, o.filesize, editor) for o in originals]
        assert {c.pk for c in copies}.isdisjoint({o.pk for o in originals})
        assert {c.file.name for c in copies}.isdisjoint({o.file.name for o in originals})
        assert [Path(settings.MEDIA_ROOT, c.file.name).read_bytes() for c in copies] == [PNG, samples.PDF]
        assert len(stored_files(settings)) == 4

        with django_capture_on_commit_callbacks(execute=True):
            client_for(editor).post(attachment_url(copies[0], "/delete"))
        assert Path(settings.MEDIA_ROOT, originals[0].file.name).read_bytes() == PNG
        assert ArticleAttachment.objects.filter(article=article).count() == 2
        detail = client_for(editor).get(docs_url(article.project, f"/articles/{article.id}")).json()
        assert [a["id"] for a in detail["attachments"]] == [o.id for o in originals]

    def test_files_are_copied_in_bounded_memory(self, editor, manager, article, settings):
        """Streamed from the original's storage to the copy's, chunk by chunk: never a whole file in memory."""
        size = 8 * 1024 * 1024
        for index in range(3):
            attach(article, manager, f"big{index}.txt", bytes([ord("a") + index]) * size)
        tracemalloc.start()
        try:
            copy = services.copy_article(article=article, actor=editor)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        copies = copy.attachments.order_by("id")
        assert [Path(settings.MEDIA_ROOT, c.file.name).read_bytes() == bytes([ord("a") + i]) * size
                for i, c in enumerate(copies)] == [True, True, True]
        assert peak < 1024 * 1024, f"{peak} bytes at the peak: a few 64 KiB chunks at most"

    def test_a_failed_copy_leaves_no_files(self, client_for, editor, manager, article, settings, monkeypatch):
        attach(article, manager)

        def fail(*args, **kwargs):
            raise OSError("database gone")

        monkeypatch.setattr(ArticleAttachment.objects, "bulk_create", fail)
        response = client_for(editor).post(docs_url(article.project, f"/articles/{article.id}/copy"))
        assert response.status_code == 500
        assert Article.objects.count() == 1
        assert len(stored_files(settings)) == 1
