"""The documentation switch: with docs off every route answers 404 before role and body are looked at,
and changes nothing; switched back on, everything is there and works again."""

from dataclasses import dataclass

import pytest
from django.core.management import call_command

from docs_area.models import Article, ArticleAttachment, ArticleComment, ArticleVersion, Folder
from docs_area.views import DOCS_DISABLED
from projects.roles import Role
from tests import sample_files as samples
from tests.factories import ArticleCommentFactory, FolderFactory
from tests.tickets.test_attachments import multipart, stored_files

from .conftest import docs_url
from .test_attachments import attach


@dataclass
class World:
    folder: Folder
    sub: Folder
    article: Article
    comment: ArticleComment
    attachment: ArticleAttachment


@pytest.fixture
def world(project, manager, folder, article):
    return World(folder=folder, sub=FolderFactory(project=project, parent=folder), article=article,
                 comment=ArticleCommentFactory(article=article, user=manager),
                 attachment=attach(article, manager))


UPLOAD = "files"  # a multipart body of one PNG


# (name, method, path under /docs, body, success status); every one of the 17 routes, and versions.
ROUTES = [
    ("root listing", "get", lambda w: "", None, 200),
    ("folder listing", "get", lambda w: f"/folders/{w.folder.id}", None, 200),
    ("create folder", "post", lambda w: "/folders", {"title": "New"}, 201),
    ("update folder", "post", lambda w: f"/folders/{w.sub.id}", {"title": "Renamed"}, 200),
    ("delete folder", "post", lambda w: f"/folders/{w.sub.id}/delete", None, 200),
    ("article detail", "get", lambda w: f"/articles/{w.article.id}", None, 200),
    ("create article", "post", lambda w: "/articles", {"title": "New"}, 201),
    ("update article", "post", lambda w: f"/articles/{w.article.id}", {"content": "Changed"}, 200),
    ("delete article", "post", lambda w: f"/articles/{w.article.id}/delete", None, 200),
    ("copy article", "post", lambda w: f"/articles/{w.article.id}/copy", None, 201),
    ("comment", "post", lambda w: f"/articles/{w.article.id}/comments", {"message": "Hi"}, 201),
    ("edit comment", "post", lambda w: f"/comments/{w.comment.id}", {"message": "Edited"}, 200),
    ("delete comment", "post", lambda w: f"/comments/{w.comment.id}/delete", None, 200),
    ("upload", "post", lambda w: f"/articles/{w.article.id}/attachments", UPLOAD, 200),
    ("download", "get", lambda w: f"/attachments/{w.attachment.id}", None, 200),
    ("delete attachment", "post", lambda w: f"/attachments/{w.attachment.id}/delete", None, 200),
    ("sort", "post", lambda w: "/sort", lambda w: {"folders": [w.folder.id]}, 200),
    ("versions", "get", lambda w: f"/articles/{w.article.id}/versions", None, 200),
]
WRITES = [route for route in ROUTES if route[1] == "post" and route[3] not in (None, UPLOAD)]


def call(api, project, world, method, path, body):
    url = docs_url(project, path(world))
    if body == UPLOAD:
        return api.post(url, **multipart(("more.png", samples.png())))
    body = body(world) if callable(body) else body
    return getattr(api, method)(url, body, format="json") if body is not None else getattr(api, method)(url)


def snapshot(settings) -> tuple:
    rows = tuple(tuple(model.objects.order_by("id").values_list()) for model in
                 (Folder, Article, ArticleComment, ArticleAttachment, ArticleVersion))
    return rows, stored_files(settings)


def switch(project, state: str) -> None:
    call_command("configureproject", str(project.id), "--docs", state)


def test_all_seventeen_routes_and_versions_are_covered():
    assert len(ROUTES) == 18
    assert len({route[0] for route in ROUTES}) == 18


@pytest.mark.parametrize(("name", "method", "path", "body", "expected"), ROUTES, ids=[route[0] for route in ROUTES])
def test_off_is_404_and_on_works_again(client_for, manager, project, world, settings, name, method, path, body,
                                       expected, django_capture_on_commit_callbacks):
    api = client_for(manager)
    switch(project, "off")
    before = snapshot(settings)

    response = call(api, project, world, method, path, body)

    assert (response.status_code, response.json()) == (404, {"code": "not_found", "error": DOCS_DISABLED})
    assert snapshot(settings) == before

    switch(project, "on")
    with django_capture_on_commit_callbacks(execute=True):
        response = call(api, project, world, method, path, body)
    assert response.status_code == expected
    assert "error" not in (response.json() if response["Content-Type"] == "application/json" else {})


@pytest.mark.parametrize(("name", "method", "path", "body", "expected"), ROUTES, ids=[route[0] for route in ROUTES])
def test_off_comes_before_the_role_table(client_for, member_with, project, world, settings, name, method, path,
                                         body, expected):
    switch(project, "off")
    before = snapshot(settings)
    response = call(client_for(member_with(Role.VIEWER)), project, world, method, path, body)
    assert (response.status_code, response.json()) == (404, {"code": "not_found", "error": DOCS_DISABLED})
    assert snapshot(settings) == before


@pytest.mark.parametrize(("name", "method", "path", "body", "expected"), WRITES, ids=[route[0] for route in WRITES])
def test_off_comes_before_the_body(client_for, manager, project, world, name, method, path, body, expected):
    switch(project, "off")
    response = call(client_for(manager), project, world, method, path, {"title": "", "message": "", "folders": "x"})
    assert (response.status_code, response.json()) == (404, {"code": "not_found", "error": DOCS_DISABLED})


def test_off_still_says_401_without_a_token_and_404_to_outsiders(client_for, anonymous, outsider, project, world):
    switch(project, "off")
    assert anonymous.get(docs_url(project)).status_code == 401
    assert client_for(outsider).get(docs_url(project)).json() == {
        "code": "not_found", "error": "project not found"}


def test_nothing_is_lost_across_off_and_on(client_for, viewer, project, world):
    api = client_for(viewer)
    before = api.get(docs_url(project, f"/articles/{world.article.id}")).json()
    switch(project, "off")
    switch(project, "on")
    assert api.get(docs_url(project, f"/articles/{world.article.id}")).json() == before
    assert [f["id"] for f in api.get(docs_url(project)).json()["folders"]] == [world.folder.id]
