"""Folders: the root and folder listings, create, update (rename, move, no cycles), soft delete that reparents."""

import pytest
from django.utils import timezone

from docs_area.models import Article, Folder
from tests.factories import ArticleFactory, FolderFactory, ProjectFactory

from .conftest import WRITE_LADDER, article_shape, chain, crumb, docs_url, folder_shape


def folder_url(folder, action: str = "") -> str:
    return docs_url(folder.project, f"/folders/{folder.id}{action}")


class TestListing:
    def test_root_lists_its_folders_and_articles_in_order(self, client_for, viewer, project, folder):
        later = FolderFactory(project=project, title="Zeta", slug="zeta", sort_order=0)
        folder.sort_order = 1
        folder.save()
        FolderFactory(project=project, parent=folder)  # one level down
        FolderFactory(project=project, deleted_at=timezone.now())
        intro = ArticleFactory(project=project, title="Intro", sort_order=2)
        first = ArticleFactory(project=project, title="First", sort_order=1, content="")
        ArticleFactory(project=project, folder=folder)
        ArticleFactory(project=project, deleted_at=timezone.now())
        ArticleFactory(project=ProjectFactory())

        response = client_for(viewer).get(docs_url(project))

        assert (response.status_code, response.json()) == (200, {
            "success": True, "role": "viewer", "current_folder": None, "breadcrumbs": [],
            "folders": [folder_shape(later), folder_shape(folder)],
            "articles": [article_shape(first), article_shape(intro)]})

    def test_a_folder_lists_its_level_with_breadcrumbs_from_the_root(self, client_for, viewer, project):
        top, middle, inner = chain(project, 3)
        sub = FolderFactory(project=project, parent=inner, title="Sub")
        article = ArticleFactory(project=project, folder=inner)
        ArticleFactory(project=project, folder=middle)

        response = client_for(viewer).get(folder_url(inner))

        assert (response.status_code, response.json()) == (200, {
            "success": True, "role": "viewer", "current_folder": folder_shape(inner),
            "breadcrumbs": [crumb(top), crumb(middle), crumb(inner)],
            "folders": [folder_shape(sub)], "articles": [article_shape(article)]})

    def test_an_empty_area(self, client_for, manager, project):
        assert client_for(manager).get(docs_url(project)).json() == {
            "success": True, "role": "manager", "current_folder": None, "breadcrumbs": [], "folders": [],
            "articles": []}

    def test_unreachable(self, client_for, anonymous, outsider, viewer, project, folder):
        other = FolderFactory(project=ProjectFactory())
        deleted = FolderFactory(project=project, deleted_at=timezone.now())
        assert anonymous.get(docs_url(project)).status_code == 401
        assert client_for(outsider).get(docs_url(project)).json() == {
            "code": "not_found", "error": "project not found"}
        assert client_for(outsider).get(folder_url(folder)).status_code == 404
        api = client_for(viewer)
        for url in [docs_url(project, f"/folders/{other.id}"), folder_url(deleted), docs_url(project, "/folders/9999")]:
            assert (api.get(url).status_code, api.get(url).json()) == (404, {
                "code": "not_found", "error": "folder not found"})

    @pytest.mark.parametrize("depth", [1, 8])
    def test_queries_do_not_grow_with_depth(self, client_for, viewer, project, depth,
                                            django_assert_max_num_queries):
        folders = chain(project, depth)
        for _ in range(3):
            FolderFactory(project=project, parent=folders[-1])
            ArticleFactory(project=project, folder=folders[-1])
        api = client_for(viewer)
        with django_assert_max_num_queries(8):
            response = api.get(folder_url(folders[-1]))
        assert len(response.json()["breadcrumbs"]) == depth
        with django_assert_max_num_queries(6):
            assert api.get(docs_url(project)).status_code == 200


class TestCreate:
    def test_at_the_root(self, client_for, member_with, project):
        FolderFactory(project=project, sort_order=4)
        contributor = member_with("contributor")
        response = client_for(contributor).post(docs_url(project, "/folders"), {"title": "How-to guides"},
                                                format="json")
        folder = Folder.objects.latest("id")
        assert (response.status_code, response.json()) == (201, {"success": True, "folder": {
            "id": folder.id, "project_id": project.id, "parent_id": None, "title": "How-to guides",
            "slug": "how-to-guides", "sort_order": 5}})
        assert folder.created_by == contributor

    def test_in_a_folder(self, client_for, editor, project, folder):
        response = client_for(editor).post(docs_url(project, "/folders"), {"title": "Deep", "parent_id": folder.id},
                                           format="json")
        assert response.status_code == 201
        assert response.json()["folder"]["parent_id"] == folder.id == Folder.objects.latest("id").parent_id

    def test_null_parent_is_the_root(self, client_for, editor, project):
        response = client_for(editor).post(docs_url(project, "/folders"), {"title": "Top", "parent_id": None},
                                           format="json")
        assert (response.status_code, response.json()["folder"]["parent_id"]) == (201, None)

    @pytest.mark.parametrize(("role", "allowed"), WRITE_LADDER)
    def test_role_ladder(self, client_for, member_with, project, role, allowed):
        response = client_for(member_with(role)).post(docs_url(project, "/folders"), {"title": "X"}, format="json")
        assert response.status_code == (201 if allowed else 403)
        assert Folder.objects.exists() == allowed

    def test_unreachable(self, client_for, anonymous, outsider, project):
        assert anonymous.post(docs_url(project, "/folders"), {"title": "X"}, format="json").status_code == 401
        assert client_for(outsider).post(docs_url(project, "/folders"), {"title": "X"}, format="json").status_code == 404
        assert not Folder.objects.exists()

    @pytest.mark.parametrize(("body", "error", "field"), [
        ({}, "title is required", "title"),
        ({"title": ""}, "title cannot be empty", "title"),
        ({"title": "   "}, "title cannot be empty", "title"),
        ({"title": None}, "title cannot be empty", "title"),
        ({"title": "x" * 256}, "title: Ensure this field has no more than 255 characters.", "title"),
        ({"title": "X", "parent_id": "top"}, "parent_id: A valid integer is required.", "parent_id"),
        ({"title": "X", "parent_id": 0}, "parent_id: Ensure this value is greater than or equal to 1.", "parent_id"),
    ])
    def test_invalid_bodies(self, client_for, editor, project, body, error, field):
        response = client_for(editor).post(docs_url(project, "/folders"), body, format="json")
        assert (response.status_code, response.json()) == (422, {
            "code": "validation_failed", "error": error, "field": field})
        assert not Folder.objects.exists()

    def test_parent_must_be_a_live_folder_of_the_project(self, client_for, editor, project):
        foreign = FolderFactory(project=ProjectFactory())
        deleted = FolderFactory(project=project, deleted_at=timezone.now())
        for parent_id in [foreign.id, deleted.id, 999999]:
            response = client_for(editor).post(docs_url(project, "/folders"), {"title": "X", "parent_id": parent_id},
                                               format="json")
            assert (response.status_code, response.json()) == (
                422, {
                    "code": "validation_failed",
                    "error": "parent_id: folder not found in this project", "field": "parent_id"})
        assert Folder.objects.count() == 2


class TestSlugs:
    def test_collisions_get_a_number(self, client_for, editor, project):
        api = client_for(editor)
        slugs = [api.post(docs_url(project, "/folders"), {"title": title}, format="json").json()["folder"]["slug"]
                 for title in ["Guides", "guides!", "Guides 2", "Guides", "???", "???", "Überblick"]]
        assert slugs == ["guides", "guides-2", "guides-2-2", "guides-3", "folder", "folder-2", "überblick"]

    def test_other_projects_and_deleted_folders_do_not_count(self, client_for, editor, project):
        FolderFactory(project=ProjectFactory(), slug="guides")
        FolderFactory(project=project, slug="guides", deleted_at=timezone.now())
        response = client_for(editor).post(docs_url(project, "/folders"), {"title": "Guides"}, format="json")
        assert response.json()["folder"]["slug"] == "guides"

    def test_folder_and_article_slugs_are_separate(self, client_for, editor, project, article):
        response = client_for(editor).post(docs_url(project, "/folders"), {"title": "Setup"}, format="json")
        assert response.json()["folder"]["slug"] == "setup"

    def test_renaming_picks_a_new_free_slug(self, client_for, editor, project, folder):
        FolderFactory(project=project, title="Manual", slug="manual")
        response = client_for(editor).post(folder_url(folder), {"title": "Manual"}, format="json")
        assert response.json()["folder"]["slug"] == "manual-2"
        response = client_for(editor).post(folder_url(folder), {"title": "Manual"}, format="json")
        assert response.json()["folder"]["slug"] == "manual-2"


class TestUpdate:
    def test_rename_keeps_the_parent(self, client_for, editor, project, folder):
        sub = FolderFactory(project=project, parent=folder, title="Old")
        response = client_for(editor).post(folder_url(sub), {"title": "New name"}, format="json")
        sub.refresh_from_db()
        assert (response.status_code, response.json()) == (200, {"success": True, "folder": folder_shape(sub)})
        assert (sub.title, sub.slug, sub.parent) == ("New name", "new-name", folder)

    def test_move_under_another_folder_goes_to_its_end(self, client_for, editor, project, folder):
        FolderFactory(project=project, parent=folder, sort_order=7)
        other = FolderFactory(project=project, title="Other")
        response = client_for(editor).post(folder_url(other), {"parent_id": folder.id}, format="json")
        other.refresh_from_db()
        assert (response.status_code, other.parent, other.sort_order, other.title) == (200, folder, 8, "Other")

    def test_null_parent_moves_to_the_root(self, client_for, editor, project, folder):
        sub = FolderFactory(project=project, parent=folder)
        response = client_for(editor).post(folder_url(sub), {"parent_id": None}, format="json")
        sub.refresh_from_db()
        assert (response.status_code, response.json()["folder"]["parent_id"], sub.parent) == (200, None, None)

    def test_an_empty_body_changes_nothing(self, client_for, editor, project, folder):
        sub = FolderFactory(project=project, parent=folder, title="Same", slug="same")
        response = client_for(editor).post(folder_url(sub), {}, format="json")
        sub.refresh_from_db()
        assert (response.status_code, sub.parent, sub.title, sub.slug) == (200, folder, "Same", "same")

    def test_not_its_own_parent(self, client_for, editor, folder):
        response = client_for(editor).post(folder_url(folder), {"parent_id": folder.id}, format="json")
        assert (response.status_code, response.json()) == (
            422, {
                "code": "validation_failed",
                "error": "parent_id: a folder cannot be its own parent", "field": "parent_id"})
        folder.refresh_from_db()
        assert folder.parent is None

    @pytest.mark.parametrize("depth", [1, 3])
    def test_not_under_its_own_descendant(self, client_for, editor, project, depth):
        top, *below = chain(project, depth + 1)
        response = client_for(editor).post(folder_url(top), {"parent_id": below[-1].id, "title": "Renamed"},
                                           format="json")
        assert (response.status_code, response.json()) == (422, {"code": "validation_failed",
            "error": "parent_id: a folder cannot be moved under one of its own subfolders", "field": "parent_id"})
        top.refresh_from_db()
        assert (top.parent, top.title) == (None, "Level 1")

    def test_parent_must_be_a_live_folder_of_the_project(self, client_for, editor, project, folder):
        foreign = FolderFactory(project=ProjectFactory())
        deleted = FolderFactory(project=project, deleted_at=timezone.now())
        for parent_id in [foreign.id, deleted.id]:
            response = client_for(editor).post(folder_url(folder), {"parent_id": parent_id}, format="json")
            assert (response.status_code, response.json()["field"]) == (422, "parent_id")
        folder.refresh_from_db()
        assert folder.parent is None

    @pytest.mark.parametrize(("body", "error"), [
        ({"title": ""}, "title cannot be empty"),
        ({"title": None}, "title cannot be empty"),
        ({"parent_id": "x"}, "parent_id: A valid integer is required."),
    ])
    def test_invalid_bodies(self, client_for, editor, folder, body, error):
        response = client_for(editor).post(folder_url(folder), body, format="json")
        assert (response.status_code, response.json()["error"]) == (422, error)
        folder.refresh_from_db()
        assert folder.title == "Guides"

    @pytest.mark.parametrize(("role", "allowed"), WRITE_LADDER)
    def test_role_ladder(self, client_for, member_with, folder, role, allowed):
        response = client_for(member_with(role)).post(folder_url(folder), {"title": "Renamed"}, format="json")
        assert response.status_code == (200 if allowed else 403)
        folder.refresh_from_db()
        assert (folder.title == "Renamed") == allowed

    def test_unreachable(self, client_for, anonymous, outsider, editor, project, folder):
        deleted = FolderFactory(project=project, deleted_at=timezone.now())
        assert anonymous.post(folder_url(folder), {"title": "X"}, format="json").status_code == 401
        assert client_for(outsider).post(folder_url(folder), {"title": "X"}, format="json").status_code == 404
        assert client_for(editor).post(folder_url(deleted), {"title": "X"}, format="json").status_code == 404
        folder.refresh_from_db()
        assert folder.title == "Guides"


class TestDelete:
    def test_children_move_up_to_the_parent(self, client_for, editor, project):
        top, middle = chain(project, 2)
        child = FolderFactory(project=project, parent=middle)
        article = ArticleFactory(project=project, folder=middle)
        elsewhere = ArticleFactory(project=project, folder=top)

        response = client_for(editor).post(folder_url(middle, "/delete"))

        assert (response.status_code, response.json()) == (200, {"success": True, "parent_id": top.id})
        middle.refresh_from_db()
        assert middle.deleted_at is not None
        assert Folder.objects.get(pk=child.pk).parent == top
        assert Article.objects.get(pk=article.pk).folder == top
        listing = client_for(editor).get(folder_url(top)).json()
        assert [f["id"] for f in listing["folders"]] == [child.id]
        assert {a["id"] for a in listing["articles"]} == {article.id, elsewhere.id}

    def test_a_root_folder_hands_its_children_to_the_root(self, client_for, editor, project, folder, article):
        child = FolderFactory(project=project, parent=folder)
        response = client_for(editor).post(folder_url(folder, "/delete"))
        assert (response.status_code, response.json()) == (200, {"success": True, "parent_id": None})
        assert (Folder.objects.get(pk=child.pk).parent, Article.objects.get(pk=article.pk).folder) == (None, None)
        assert client_for(editor).get(folder_url(folder)).status_code == 404
        assert client_for(editor).post(folder_url(folder, "/delete")).status_code == 404

    @pytest.mark.parametrize(("role", "allowed"), WRITE_LADDER)
    def test_role_ladder(self, client_for, member_with, folder, role, allowed):
        response = client_for(member_with(role)).post(folder_url(folder, "/delete"))
        assert response.status_code == (200 if allowed else 403)
        folder.refresh_from_db()
        assert (folder.deleted_at is not None) == allowed

    def test_unreachable(self, client_for, anonymous, outsider, folder):
        assert anonymous.post(folder_url(folder, "/delete")).status_code == 401
        assert client_for(outsider).post(folder_url(folder, "/delete")).status_code == 404
        folder.refresh_from_db()
        assert folder.deleted_at is None
