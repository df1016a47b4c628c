"""The back office: every documentation model is listed and opens; removing an attachment removes its file."""

import pytest
from django.utils import timezone

from tests.factories import ArticleCommentFactory, ArticleFactory, FolderFactory
from tests.tickets.test_attachments import stored_files

from .test_attachments import attach


@pytest.mark.parametrize("model", ["folder", "article", "articlecomment", "articleattachment"])
def test_lists_and_pages_open(staff, manager, project, article, model):
    objects = {"folder": article.folder, "article": article,
               "articlecomment": ArticleCommentFactory(article=article), "articleattachment": attach(article, manager)}
    assert staff.get(f"/admin/docs_area/{model}/").status_code == 200
    assert staff.get(f"/admin/docs_area/{model}/{objects[model].pk}/change/").status_code == 200


def test_an_article_shows_its_versions(staff, client_for, editor, project, article):
    client_for(editor).post(f"/api/v1/projects/{project.id}/docs/articles/{article.id}", {"title": "Renamed"},
                            format="json")
    page = staff.get(f"/admin/docs_area/article/{article.pk}/change/").content.decode()
    assert "Renamed" in page and "Setup" in page  # the old title lives on in the versions inline only


def test_deleted_filter(staff, project):
    FolderFactory(project=project, title="Live folder")
    FolderFactory(project=project, title="Gone folder", deleted_at=timezone.now())
    ArticleFactory(project=project, title="Gone article", deleted_at=timezone.now())
    page = staff.get("/admin/docs_area/folder/?deleted=yes").content.decode()
    assert "Gone folder" in page and "Live folder" not in page
    assert "Gone article" in staff.get("/admin/docs_area/article/?deleted=yes").content.decode()


def test_deleting_an_attachment_removes_its_file(staff, manager, article, settings,
                                                 django_capture_on_commit_callbacks):
    attachment, kept = attach(article, manager), attach(article, manager)
    with django_capture_on_commit_callbacks(execute=True):
        response = staff.post(f"/admin/docs_area/articleattachment/{attachment.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert stored_files(settings) == [kept.file.name]
