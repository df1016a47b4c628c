"""Slugs and the folder tree under concurrent writes (PostgreSQL's row locks, real threads)."""

from concurrent.futures import ThreadPoolExecutor
from threading import Barrier

import pytest
from django.db import connection

from core.errors import RuleViolation
from docs_area import services
from docs_area.models import Article, Folder
from tests.factories import FolderFactory, ProjectFactory

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL's row locks and real threads"),
]


def at_once(count: int, action) -> list:
    start = Barrier(count)

    def run(index: int):
        start.wait()
        try:
            return action(index)
        finally:
            connection.close()

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(run, range(count)))


def test_articles_created_at_once_get_distinct_slugs():
    project = ProjectFactory()
    at_once(6, lambda index: services.create_article(project=project, title="Release notes", content="",
                                                     folder_id=None, actor=project.owner))
    assert sorted(Article.objects.values_list("slug", flat=True)) == [
        "release-notes", "release-notes-2", "release-notes-3", "release-notes-4", "release-notes-5",
        "release-notes-6"]


def test_two_folders_moved_under_each_other_at_once_never_make_a_cycle():
    project = ProjectFactory()
    first, second = FolderFactory(project=project), FolderFactory(project=project)
    pairs = [(first, second), (second, first)]

    def move(index: int) -> bool:
        folder, parent = pairs[index]
        try:
            services.update_folder(folder=folder, parent_id=parent.pk, actor=project.owner)
            return True
        except RuleViolation:
            return False

    assert sorted(at_once(2, move)) == [False, True]
    parents = dict(Folder.objects.values_list("id", "parent_id"))
    assert None in (parents[first.pk], parents[second.pk])
