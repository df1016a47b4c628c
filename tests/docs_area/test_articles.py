"""Articles: create, detail, update (with versions), soft delete, copy, slugs."""

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from docs_area.models import Article, ArticleVersion
from tests.factories import (
    ArticleAttachmentFactory,
    ArticleCommentFactory,
    ArticleFactory,
    FolderFactory,
    ProjectFactory,
)

from .conftest import WRITE_LADDER, article_shape, chain, crumb, docs_url


def article_url(article, action: str = "") -> str:
    return docs_url(article.project, f"/articles/{article.id}{action}")


def create(api, project, body):
    return api.post(docs_url(project, "/articles"), body, format="json")


class TestCreate:
    def test_at_the_root_with_default_content(self, client_for, contributor, project):
        ArticleFactory(project=project, sort_order=3)
        response = create(client_for(contributor), project, {"title": "Getting started"})
        article = Article.objects.latest("id")
        assert (response.status_code, response.json()) == (201, {"success": True, "article": {
            "id": article.id, "project_id": project.id, "folder_id": None, "title": "Getting started",
            "slug": "getting-started", "content": "", "sort_order": 4}})
        assert (article.created_by, article.updated_by) == (contributor, None)

    def test_in_a_folder_with_markdown(self, client_for, editor, project, folder):
        content = "  # Title\n\n* keep the leading blanks\n"
        response = create(client_for(editor), project, {"title": "Deploy", "content": content, "folder_id": folder.id})
        assert response.status_code == 201
        assert response.json()["article"]["folder_id"] == folder.id
        assert Article.objects.get(folder=folder).content == content

    @pytest.mark.parametrize(("role", "allowed"), WRITE_LADDER)
    def test_role_ladder(self, client_for, member_with, project, role, allowed):
        response = create(client_for(member_with(role)), project, {"title": "X"})
        assert response.status_code == (201 if allowed else 403)
        assert Article.objects.exists() == allowed

    def test_unreachable(self, client_for, anonymous, outsider, project):
        assert create(anonymous, project, {"title": "X"}).status_code == 401
        assert create(client_for(outsider), project, {"title": "X"}).status_code == 404
        assert not Article.objects.exists()

    @pytest.mark.parametrize(("body", "error", "field"), [
        ({}, "title is required", "title"),
        ({"content": "text"}, "title is required", "title"),
        ({"title": ""}, "title cannot be empty", "title"),
        ({"title": "x" * 256}, "title: Ensure this field has no more than 255 characters.", "title"),
        ({"title": "X", "content": None}, "content cannot be empty", "content"),
        ({"title": "X", "content": ["a"]}, "content: Not a valid string.", "content"),
        ({"title": "X", "content": "x" * 200_001},
         "content: Ensure this field has no more than 200000 characters.", "content"),
        ({"title": "X", "folder_id": "root"}, "folder_id: A valid integer is required.", "folder_id"),
    ])
    def test_invalid_bodies(self, client_for, editor, project, body, error, field):
        response = create(client_for(editor), project, body)
        assert (response.status_code, response.json()) == (422, {
            "code": "validation_failed", "error": error, "field": field})
        assert not Article.objects.exists()

    def test_folder_must_be_a_live_folder_of_the_project(self, client_for, editor, project):
        foreign = FolderFactory(project=ProjectFactory())
        deleted = FolderFactory(project=project, deleted_at=timezone.now())
        for folder_id in [foreign.id, deleted.id, 999999]:
            response = create(client_for(editor), project, {"title": "X", "folder_id": folder_id})
            assert (response.status_code, response.json()) == (
                422, {
                    "code": "validation_failed",
                    "error": "folder_id: folder not found in this project", "field": "folder_id"})
        assert not Article.objects.exists()


class TestSlugs:
    def test_unique_in_the_project_with_a_number(self, client_for, editor, project, folder):
        ArticleFactory(project=ProjectFactory(), slug="intro")
        ArticleFactory(project=project, slug="faq", deleted_at=timezone.now())
        api = client_for(editor)
        bodies = [{"title": "Intro"}, {"title": "Intro", "folder_id": folder.id}, {"title": "INTRO!"},
                  {"title": "FAQ"}, {"title": "..."}, {"title": "Café menu"}]
        assert [create(api, project, body).json()["article"]["slug"] for body in bodies] == [
            "intro", "intro-2", "intro-3", "faq", "article", "café-menu"]

    def test_a_long_title_leaves_room_for_the_number(self, client_for, editor, project):
        api = client_for(editor)
        first, second = (create(api, project, {"title": "a" * 255}).json()["article"]["slug"] for _ in range(2))
        assert (len(first), second) == (243, first + "-2")

    def test_the_database_refuses_two_live_articles_with_one_slug(self, project):
        ArticleFactory(project=project, slug="same")
        ArticleFactory(project=project, slug="same", deleted_at=timezone.now())
        with pytest.raises(IntegrityError), transaction.atomic():
            ArticleFactory(project=project, slug="same")


class TestDetail:
    def test_shape(self, client_for, member_with, manager, project):
        top, inner = chain(project, 2)
        article = ArticleFactory(project=project, folder=inner, created_by=manager, updated_by=manager)
        author = member_with("viewer")
        first = ArticleCommentFactory(article=article, user=author, message="Looks good")
        ArticleCommentFactory(article=article, deleted_at=timezone.now())
        second = ArticleCommentFactory(article=article, user=manager, message="Thanks")
        attachment = ArticleAttachmentFactory(article=article, original_name="guide.txt")
        ArticleAttachmentFactory(article=ArticleFactory(project=project))

        response = client_for(author).get(article_url(article))

        assert (response.status_code, response.json()) == (200, {
            "success": True, "role": "viewer", "current_user_id": author.id,
            "article": {"id": article.id, "project_id": project.id, "folder_id": inner.id, "title": article.title,
                        "slug": article.slug, "content": article.content, "created_by": manager.id,
                        "updated_by": manager.id},
            "breadcrumbs": [crumb(top), crumb(inner)],
            "attachments": [{"id": attachment.id, "article_id": article.id, "original_name": "guide.txt",
                             "filesize": 10, "mime_type": "text/plain"}],
            "comments": [
                {"id": first.id, "user_id": author.id, "user_name": author.name, "message": "Looks good"},
                {"id": second.id, "user_id": manager.id, "user_name": manager.name, "message": "Thanks"}]})

    def test_at_the_root(self, client_for, viewer, project):
        article = ArticleFactory(project=project)
        body = client_for(viewer).get(article_url(article)).json()
        assert (body["breadcrumbs"], body["article"]["folder_id"], body["article"]["updated_by"]) == ([], None, None)

    def test_unreachable(self, client_for, anonymous, outsider, viewer, project, article):
        deleted = ArticleFactory(project=project, deleted_at=timezone.now())
        foreign = ArticleFactory(project=ProjectFactory())
        assert anonymous.get(article_url(article)).status_code == 401
        assert client_for(outsider).get(article_url(article)).json() == {
            "code": "not_found", "error": "project not found"}
        for url in [article_url(deleted), docs_url(project, f"/articles/{foreign.id}"), docs_url(project, "/articles/9")]:
            response = client_for(viewer).get(url)
            assert (response.status_code, response.json()) == (404, {"code": "not_found", "error": "article not found"})

    @pytest.mark.parametrize("depth", [1, 8])
    def test_queries_do_not_grow_with_depth(self, client_for, viewer, project, depth,
                                            django_assert_max_num_queries):
        article = ArticleFactory(project=project, folder=chain(project, depth)[-1])
        for _ in range(3):
            ArticleCommentFactory(article=article, user=viewer)
            ArticleAttachmentFactory(article=article)
        api = client_for(viewer)
        with django_assert_max_num_queries(8):
            response = api.get(article_url(article))
        assert (len(response.json()["breadcrumbs"]), len(response.json()["comments"])) == (depth, 3)


class TestUpdate:
    def test_title_and_content_keep_a_version(self, client_for, editor, manager, project, article):
        response = client_for(editor).post(article_url(article), {"title": "Install", "content": "New"}, format="json")
        version = ArticleVersion.objects.get()
        article.refresh_from_db()
        assert (response.status_code, response.json()) == (200, {"success": True, "article": article_shape(article)})
        assert (article.title, article.slug, article.content, article.updated_by) == ("Install", "install", "New",
                                                                                    editor)
        assert (article.folder_id, article.created_by) == (response.json()["article"]["folder_id"], manager)
        assert (version.article, version.title, version.content, version.edited_by) == (
            article, "Setup", "# Setup\n\nRun it.", editor)

    def test_content_only_keeps_title_and_slug(self, client_for, editor, article):
        client_for(editor).post(article_url(article), {"content": ""}, format="json")
        article.refresh_from_db()
        assert (article.title, article.slug, article.content) == ("Setup", "setup", "")
        assert ArticleVersion.objects.get().content == "# Setup\n\nRun it."

    def test_null_folder_moves_to_the_root_without_a_version(self, client_for, editor, article):
        response = client_for(editor).post(article_url(article), {"folder_id": None}, format="json")
        article.refresh_from_db()
        assert (response.status_code, article.folder, article.updated_by) == (200, None, editor)
        assert not ArticleVersion.objects.exists()

    def test_move_to_another_folder_goes_to_its_end(self, client_for, editor, project, article):
        target = FolderFactory(project=project)
        ArticleFactory(project=project, folder=target, sort_order=9)
        client_for(editor).post(article_url(article), {"folder_id": target.id}, format="json")
        article.refresh_from_db()
        assert (article.folder, article.sort_order) == (target, 10)

    def test_unchanged_values_keep_no_version(self, client_for, editor, article):
        response = client_for(editor).post(article_url(article), {"title": "Setup", "content": article.content},
                                           format="json")
        assert response.status_code == 200
        assert not ArticleVersion.objects.exists()

    @pytest.mark.parametrize(("body", "error", "field"), [
        ({"title": ""}, "title cannot be empty", "title"),
        ({"title": None}, "title cannot be empty", "title"),
        ({"content": None}, "content cannot be empty", "content"),
        ({"folder_id": "x"}, "folder_id: A valid integer is required.", "folder_id"),
        ({"title": "New", "folder_id": 999999}, "folder_id: folder not found in this project", "folder_id"),
    ])
    def test_invalid_bodies_change_nothing(self, client_for, editor, article, body, error, field):
        response = client_for(editor).post(article_url(article), body, format="json")
        assert (response.status_code, response.json()) == (422, {
            "code": "validation_failed", "error": error, "field": field})
        article.refresh_from_db()
        assert (article.title, article.updated_by) == ("Setup", None)
        assert not ArticleVersion.objects.exists()

    def test_folder_of_another_project(self, client_for, editor, article):
        foreign = FolderFactory(project=ProjectFactory())
        response = client_for(editor).post(article_url(article), {"folder_id": foreign.id}, format="json")
        assert response.status_code == 422
        assert Article.objects.get(pk=article.pk).folder_id != foreign.id

    @pytest.mark.parametrize(("role", "allowed"), WRITE_LADDER)
    def test_role_ladder(self, client_for, member_with, article, role, allowed):
        response = client_for(member_with(role)).post(article_url(article), {"title": "New"}, format="json")
        assert response.status_code == (200 if allowed else 403)
        article.refresh_from_db()
        assert (article.title == "New") == allowed

    def test_unreachable(self, client_for, anonymous, outsider, editor, project, article):
        deleted = ArticleFactory(project=project, deleted_at=timezone.now())
        assert anonymous.post(article_url(article), {"title": "X"}, format="json").status_code == 401
        assert client_for(outsider).post(article_url(article), {"title": "X"}, format="json").status_code == 404
        assert client_for(editor).post(article_url(deleted), {"title": "X"}, format="json").status_code == 404
        article.refresh_from_db()
        assert article.title == "Setup"


class TestVersions:
    def test_newest_first_with_editor_and_time(self, client_for, editor, manager, viewer, article):
        client_for(editor).post(article_url(article), {"content": "second"}, format="json")
        client_for(manager).post(article_url(article), {"title": "Third"}, format="json")
        older, newer = ArticleVersion.objects.order_by("id")

        response = client_for(viewer).get(article_url(article, "/versions"))

        assert (response.status_code, response.json()) == (200, {"success": True, "versions": [
            {"id": newer.id, "title": "Setup", "content": "second", "edited_by": {"id": manager.id,
                                                                                   "name": manager.name},
             "created_at": newer.created_at.strftime("%Y-%m-%d %H:%M:%S")},
            {"id": older.id, "title": "Setup", "content": "# Setup\n\nRun it.",
             "edited_by": {"id": editor.id, "name": editor.name},
             "created_at": older.created_at.strftime("%Y-%m-%d %H:%M:%S")}]})

    def test_none_yet(self, client_for, viewer, article):
        assert client_for(viewer).get(article_url(article, "/versions")).json() == {"success": True, "versions": []}

    def test_unreachable(self, client_for, anonymous, outsider, viewer, project, article):
        deleted = ArticleFactory(project=project, deleted_at=timezone.now())
        assert anonymous.get(article_url(article, "/versions")).status_code == 401
        assert client_for(outsider).get(article_url(article, "/versions")).status_code == 404
        assert client_for(viewer).get(article_url(deleted, "/versions")).status_code == 404


class TestDelete:
    def test_soft(self, client_for, contributor, project, article):
        response = client_for(contributor).post(article_url(article, "/delete"))
        assert (response.status_code, response.json()) == (200, {"success": True})
        article.refresh_from_db()
        assert article.deleted_at is not None
        assert client_for(contributor).get(article_url(article)).status_code == 404
        assert client_for(contributor).get(docs_url(project, f"/folders/{article.folder_id}")).json()["articles"] == []
        assert client_for(contributor).post(article_url(article, "/delete")).status_code == 404

    def test_frees_the_slug(self, client_for, editor, project, article):
        client_for(editor).post(article_url(article, "/delete"))
        assert create(client_for(editor), project, {"title": "Setup"}).json()["article"]["slug"] == "setup"

    @pytest.mark.parametrize(("role", "allowed"), WRITE_LADDER)
    def test_role_ladder(self, client_for, member_with, article, role, allowed):
        response = client_for(member_with(role)).post(article_url(article, "/delete"))
        assert response.status_code == (200 if allowed else 403)
        article.refresh_from_db()
        assert (article.deleted_at is not None) == allowed

    def test_unreachable(self, client_for, anonymous, outsider, article):
        assert anonymous.post(article_url(article, "/delete")).status_code == 401
        assert client_for(outsider).post(article_url(article, "/delete")).status_code == 404
        article.refresh_from_db()
        assert article.deleted_at is None


class TestCopy:
    def test_same_folder_new_title_owned_by_the_caller(self, client_for, contributor, project, folder, article):
        article.updated_by = article.created_by
        article.save()
        ArticleCommentFactory(article=article)
        ArticleFactory(project=project, folder=folder, sort_order=5)

        response = client_for(contributor).post(article_url(article, "/copy"))

        copy = Article.objects.latest("id")
        assert (response.status_code, response.json()) == (201, {"success": True, "article": {
            "id": copy.id, "project_id": project.id, "folder_id": folder.id, "title": "Setup (copy)",
            "slug": "setup-copy", "content": article.content, "sort_order": 6}})
        assert (copy.created_by, copy.updated_by) == (contributor, None)
        assert (copy.comments.count(), copy.versions.count()) == (0, 0)

    def test_copies_of_a_copy(self, client_for, editor, article):
        api = client_for(editor)
        api.post(article_url(article, "/copy"))
        response = api.post(article_url(article, "/copy"))
        assert (response.json()["article"]["title"], response.json()["article"]["slug"]) == (
            "Setup (copy)", "setup-copy-2")

    def test_a_long_title_stays_within_the_limit(self, client_for, editor, project):
        article = ArticleFactory(project=project, title="t" * 255)
        response = client_for(editor).post(article_url(article, "/copy"))
        assert response.json()["article"]["title"] == "t" * 248 + " (copy)"

    @pytest.mark.parametrize(("role", "allowed"), WRITE_LADDER)
    def test_role_ladder(self, client_for, member_with, article, role, allowed):
        response = client_for(member_with(role)).post(article_url(article, "/copy"))
        assert response.status_code == (201 if allowed else 403)
        assert Article.objects.count() == 1 + allowed

    def test_unreachable(self, client_for, anonymous, outsider, editor, project, article):
        deleted = ArticleFactory(project=project, deleted_at=timezone.now())
        assert anonymous.post(article_url(article, "/copy")).status_code == 401
        assert client_for(outsider).post(article_url(article, "/copy")).status_code == 404
        assert client_for(editor).post(article_url(deleted, "/copy")).status_code == 404
        assert Article.objects.count() == 2
