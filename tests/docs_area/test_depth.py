"""Folders nest at most DOCS_MAX_FOLDER_DEPTH levels (422 beyond, at creation and on a move), and the
pages write the tree in one loop, so a tree deeper than that (left by an older release, or by a hard edit
in the admin) still renders for every member."""

from html.parser import HTMLParser

import pytest

from docs_area.models import Folder
from tests.factories import ArticleFactory, FolderFactory

from .conftest import chain, docs_url

TOO_DEEP = {"code": "validation_failed", "error": "parent_id: folders nest at most 4 levels deep", "field": "parent_id"}


@pytest.fixture
def four_deep(settings):
    settings.DOCS_MAX_FOLDER_DEPTH = 4


def create(api, project, parent):
    return api.post(docs_url(project, "/folders"), {"title": "New", "parent_id": parent.id}, format="json")


def move(api, folder, parent):
    return api.post(docs_url(folder.project, f"/folders/{folder.id}"), {"parent_id": parent.id}, format="json")


def test_the_default_is_32_levels(client_for, editor, project, settings):
    assert settings.DOCS_MAX_FOLDER_DEPTH == 32
    folders = chain(project, 31)
    api = client_for(editor)
    response = create(api, project, folders[-1])
    assert response.status_code == 201
    deepest = Folder.objects.get(pk=response.json()["folder"]["id"])
    response = create(api, project, deepest)
    assert (response.status_code, response.json()) == (
        422, {
            "code": "validation_failed",
            "error": "parent_id: folders nest at most 32 levels deep", "field": "parent_id"})
    assert Folder.objects.count() == 32


def test_a_folder_one_level_too_deep_is_refused(client_for, editor, project, four_deep):
    folders = chain(project, 4)
    api = client_for(editor)
    assert create(api, project, folders[2]).status_code == 201
    response = create(api, project, folders[3])
    assert (response.status_code, response.json()) == (422, TOO_DEEP)
    assert Folder.objects.count() == 5


def test_a_move_counts_the_levels_the_folder_carries(client_for, editor, project, four_deep):
    deep = chain(project, 2)
    carried = FolderFactory(project=project, title="Carried")
    FolderFactory(project=project, parent=carried)  # the moved folder spans two levels
    api = client_for(editor)
    assert move(api, carried, deep[0]).status_code == 200  # levels 2 and 3

    carried.refresh_from_db()
    response = move(api, carried, FolderFactory(project=project, parent=deep[1]))  # levels 4 and 5
    assert (response.status_code, response.json()) == (422, TOO_DEEP)
    carried.refresh_from_db()
    assert carried.parent == deep[0]


def test_a_move_within_the_depth_at_its_limit(client_for, editor, project, four_deep):
    target = chain(project, 3)[-1]
    leaf = FolderFactory(project=project)
    assert move(client_for(editor), leaf, target).status_code == 200
    leaf.refresh_from_db()
    assert leaf.parent == target


class Nesting(HTMLParser):
    """How deep in the sidebar's lists each folder title and article link sits."""

    def __init__(self, html: str):
        super().__init__()
        self.depth, self.text_depth, self.open_items = 0, {}, 0
        self.feed(html.split('aria-label="Documentation tree">', 1)[1].split("</nav>", 1)[0])

    def handle_starttag(self, tag, attrs):
        self.depth += tag == "ul"
        self.open_items += tag == "li"

    def handle_endtag(self, tag):
        self.depth -= tag == "ul"
        self.open_items -= tag == "li"

    def handle_data(self, data):
        if data.strip():
            self.text_depth[data.strip()] = self.depth


def test_the_tree_is_nested_as_the_folders_are(client, viewer, project):
    top = FolderFactory(project=project, title="Top", sort_order=0)
    inner = FolderFactory(project=project, parent=top, title="Inner")
    ArticleFactory(project=project, folder=inner, title="Deep article")
    ArticleFactory(project=project, folder=top, title="Top article")
    FolderFactory(project=project, title="Empty", sort_order=1)
    ArticleFactory(project=project, title="Root article")
    client.force_login(viewer)
    tree = Nesting(client.get(f"/projects/{project.id}/docs/").content.decode())
    assert tree.text_depth == {"Top": 1, "Inner": 2, "Deep article": 3, "Top article": 2, "Empty": 1,
                               "Root article": 1}
    assert (tree.depth, tree.open_items) == (0, 0)  # every list and item closed


def test_a_tree_deeper_than_the_stack_renders(client, viewer, project):
    folders = chain(project, 300)
    article = ArticleFactory(project=project, folder=folders[-1], title="Bottom")
    client.force_login(viewer)
    for path in [f"/projects/{project.id}/docs/", f"/projects/{project.id}/docs/articles/{article.id}/"]:
        response = client.get(path)
        assert response.status_code == 200
        tree = Nesting(response.content.decode())
        assert (tree.text_depth["Level 300"], tree.text_depth["Bottom"], tree.depth) == (300, 301, 0)
