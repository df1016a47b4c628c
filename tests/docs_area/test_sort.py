"""Sort: array position becomes sort_order; ids of another project or another level change nothing."""

import pytest
from django.utils import timezone

from docs_area.models import Article, Folder
from tests.factories import ArticleFactory, FolderFactory, ProjectFactory

from .conftest import WRITE_LADDER, docs_url


def sort(api, project, body):
    return api.post(docs_url(project, "/sort"), body, format="json")


def orders(model, rows) -> list[int]:
    return [model.objects.get(pk=row.pk).sort_order for row in rows]


@pytest.fixture
def level(project, folder):
    """Three folders and three articles inside `folder`, in order 0, 1, 2."""
    folders = [FolderFactory(project=project, parent=folder, sort_order=n) for n in range(3)]
    articles = [ArticleFactory(project=project, folder=folder, sort_order=n) for n in range(3)]
    return folders, articles


def test_positions_become_sort_order(client_for, contributor, project, level):
    folders, articles = level
    response = sort(client_for(contributor), project, {"folders": [folders[2].id, folders[0].id, folders[1].id],
                                                       "articles": [articles[1].id, articles[2].id, articles[0].id]})
    assert (response.status_code, response.json()) == (200, {"success": True})
    assert orders(Folder, folders) == [1, 2, 0]
    assert orders(Article, articles) == [2, 0, 1]
    listing = client_for(contributor).get(docs_url(project, f"/folders/{folders[0].parent_id}")).json()
    assert [f["id"] for f in listing["folders"]] == [folders[2].id, folders[0].id, folders[1].id]


def test_one_list_alone_at_the_root(client_for, editor, project):
    first, second = ArticleFactory(project=project, sort_order=0), ArticleFactory(project=project, sort_order=1)
    assert sort(client_for(editor), project, {"articles": [second.id, first.id]}).status_code == 200
    assert orders(Article, [first, second]) == [1, 0]


@pytest.mark.parametrize("case", ["other project", "other level", "deleted", "unknown", "twice", "root and folder"])
def test_refused_lists_change_nothing(client_for, editor, project, folder, level, case):
    folders, articles = level
    foreign = FolderFactory(project=ProjectFactory())
    root_folder = FolderFactory(project=project, sort_order=9)
    deleted = ArticleFactory(project=project, folder=folder, deleted_at=timezone.now())
    body, error = {
        "other project": ({"folders": [folders[1].id, foreign.id]},
                          f"folders: no folder {foreign.id} in this project"),
        "other level": ({"articles": [articles[1].id], "folders": [folders[2].id, root_folder.id]},
                        "folders: all must be in the same folder"),
        "deleted": ({"folders": [folders[1].id], "articles": [articles[2].id, deleted.id]},
                    f"articles: no article {deleted.id} in this project"),
        "unknown": ({"articles": [999999]}, "articles: no article 999999 in this project"),
        "twice": ({"articles": [articles[1].id, articles[1].id]}, "articles: an id is listed twice"),
        "root and folder": ({"articles": [articles[1].id, ArticleFactory(project=project).id]},
                            "articles: all must be in the same folder"),
    }[case]
    response = sort(client_for(editor), project, body)
    assert (response.status_code, response.json()) == (422, {
        "code": "validation_failed", "error": error, "field": error.split(":")[0]})
    assert orders(Folder, folders) == [0, 1, 2]
    assert orders(Article, articles) == [0, 1, 2]
    assert Folder.objects.get(pk=root_folder.pk).sort_order == 9


@pytest.mark.parametrize(("body", "error", "field"), [
    ({}, "folders: folders or articles is required", "folders"),
    ({"folders": "1,2"}, 'folders: Expected a list of items but got type "str".', "folders"),
    ({"articles": [1, "x"]}, "articles[1]: A valid integer is required.", "articles"),
])
def test_invalid_bodies(client_for, editor, project, body, error, field):
    response = sort(client_for(editor), project, body)
    assert (response.status_code, response.json()) == (422, {
        "code": "validation_failed", "error": error, "field": field})


@pytest.mark.parametrize(("role", "allowed"), WRITE_LADDER)
def test_role_ladder(client_for, member_with, project, level, role, allowed):
    folders, _ = level
    response = sort(client_for(member_with(role)), project, {"folders": [folders[1].id, folders[0].id]})
    assert response.status_code == (200 if allowed else 403)
    assert orders(Folder, folders[:2]) == ([1, 0] if allowed else [0, 1])


def test_unreachable(client_for, anonymous, outsider, project, level):
    folders, _ = level
    body = {"folders": [folders[1].id, folders[0].id]}
    assert sort(anonymous, project, body).status_code == 401
    assert sort(client_for(outsider), project, body).status_code == 404
    assert orders(Folder, folders) == [0, 1, 2]
