"""Comments on articles: any member writes, the author edits, the author or a manager deletes (soft)."""

import pytest
from django.utils import timezone

from docs_area.models import ArticleComment
from projects.roles import Role
from tests.conftest import ROLES
from tests.factories import ArticleCommentFactory, ArticleFactory, ProjectFactory

from .conftest import docs_url


def comments_url(article) -> str:
    return docs_url(article.project, f"/articles/{article.id}/comments")


def comment_url(comment, action: str = "") -> str:
    return docs_url(comment.article.project, f"/comments/{comment.id}{action}")


def written(comment) -> dict:
    return {"id": comment.id, "user_id": comment.user_id, "user_name": comment.user.name,
            "message": comment.message, "created_at": comment.created_at.strftime("%Y-%m-%d %H:%M:%S")}


@pytest.fixture
def comment(article, member_with):
    return ArticleCommentFactory(article=article, user=member_with(Role.VIEWER), message="First!")


class TestCreate:
    @pytest.mark.parametrize("role", ROLES)
    def test_any_member(self, client_for, member_with, article, role):
        author = member_with(role)
        response = client_for(author).post(comments_url(article), {"message": "Nice page"}, format="json")
        comment = ArticleComment.objects.get()
        assert (response.status_code, response.json()) == (201, {"success": True, "comment": written(comment)})
        assert (comment.article, comment.user, comment.message) == (article, author, "Nice page")

    @pytest.mark.parametrize(("body", "error"), [
        ({}, "message is required"), ({"message": ""}, "message cannot be empty"),
        ({"message": "x" * 20_001}, "message: Ensure this field has no more than 20000 characters."),
    ])
    def test_invalid_bodies(self, client_for, viewer, article, body, error):
        response = client_for(viewer).post(comments_url(article), body, format="json")
        assert (response.status_code, response.json()) == (422, {
            "code": "validation_failed", "error": error, "field": "message"})
        assert not ArticleComment.objects.exists()

    def test_unreachable(self, client_for, anonymous, outsider, viewer, project, article):
        deleted = ArticleFactory(project=project, deleted_at=timezone.now())
        body = {"message": "Hi"}
        assert anonymous.post(comments_url(article), body, format="json").status_code == 401
        assert client_for(outsider).post(comments_url(article), body, format="json").status_code == 404
        assert client_for(viewer).post(comments_url(deleted), body, format="json").status_code == 404
        assert not ArticleComment.objects.exists()


class TestEdit:
    def test_by_the_author(self, client_for, comment):
        response = client_for(comment.user).post(comment_url(comment), {"message": "Edited"}, format="json")
        comment.refresh_from_db()
        assert (response.status_code, response.json()) == (200, {"success": True, "comment": written(comment)})
        assert comment.message == "Edited"

    @pytest.mark.parametrize("role", ROLES)
    def test_nobody_else(self, client_for, member_with, comment, role):
        response = client_for(member_with(role)).post(comment_url(comment), {"message": "Edited"}, format="json")
        assert (response.status_code, response.json()) == (403, {
            "code": "forbidden", "error": "only its author can edit a comment"})
        comment.refresh_from_db()
        assert comment.message == "First!"

    def test_invalid_body(self, client_for, comment):
        response = client_for(comment.user).post(comment_url(comment), {"message": ""}, format="json")
        assert (response.status_code, response.json()) == (422, {
            "code": "validation_failed", "error": "message cannot be empty",
                                                                 "field": "message"})
        comment.refresh_from_db()
        assert comment.message == "First!"

    def test_unreachable(self, client_for, anonymous, outsider, project, comment):
        deleted = ArticleCommentFactory(article=comment.article, user=comment.user, deleted_at=timezone.now())
        on_deleted_article = ArticleCommentFactory(article=ArticleFactory(project=project, deleted_at=timezone.now()),
                                                   user=comment.user)
        foreign = ArticleCommentFactory(article=ArticleFactory(project=ProjectFactory()), user=comment.user)
        body = {"message": "Edited"}
        assert anonymous.post(comment_url(comment), body, format="json").status_code == 401
        assert client_for(outsider).post(comment_url(comment), body, format="json").status_code == 404
        api = client_for(comment.user)
        for url in [comment_url(deleted), comment_url(on_deleted_article), docs_url(project, f"/comments/{foreign.id}")]:
            assert (api.post(url, body, format="json").json()) == {"code": "not_found", "error": "comment not found"}
        assert not ArticleComment.objects.filter(message="Edited").exists()


class TestDelete:
    def test_by_the_author_is_soft(self, client_for, viewer, comment):
        response = client_for(comment.user).post(comment_url(comment, "/delete"))
        assert (response.status_code, response.json()) == (200, {"success": True})
        comment.refresh_from_db()
        assert comment.deleted_at is not None
        article_url = docs_url(comment.article.project, f"/articles/{comment.article_id}")
        assert client_for(viewer).get(article_url).json()["comments"] == []
        assert client_for(comment.user).post(comment_url(comment, "/delete")).status_code == 404

    @pytest.mark.parametrize(("role", "allowed"), [(role, role == Role.MANAGER) for role in ROLES])
    def test_others_need_manager(self, client_for, member_with, comment, role, allowed):
        response = client_for(member_with(role)).post(comment_url(comment, "/delete"))
        assert response.status_code == (200 if allowed else 403)
        comment.refresh_from_db()
        assert (comment.deleted_at is not None) == allowed

    def test_unreachable(self, client_for, anonymous, outsider, comment):
        assert anonymous.post(comment_url(comment, "/delete")).status_code == 401
        assert client_for(outsider).post(comment_url(comment, "/delete")).status_code == 404
        comment.refresh_from_db()
        assert comment.deleted_at is None
