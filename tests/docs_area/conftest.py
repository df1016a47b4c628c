import pytest

from projects.roles import Role
from tests.conftest import ROLES
from tests.factories import ArticleFactory, FolderFactory

# Who may write in the documentation area: contributor and up.
WRITE_LADDER = [(role, role != Role.VIEWER) for role in ROLES]


def docs_url(project, path: str = "") -> str:
    return f"/api/v1/projects/{project.id}/docs{path}"


def folder_shape(folder) -> dict:
    return {"id": folder.id, "project_id": folder.project_id, "parent_id": folder.parent_id, "title": folder.title,
            "slug": folder.slug, "sort_order": folder.sort_order}


def article_shape(article) -> dict:
    return {"id": article.id, "project_id": article.project_id, "folder_id": article.folder_id,
            "title": article.title, "slug": article.slug, "content": article.content,
            "sort_order": article.sort_order}


def crumb(folder) -> dict:
    return {"id": folder.id, "title": folder.title, "slug": folder.slug}


def chain(project, depth: int) -> list:
    """Folders nested `depth` deep, the outermost first."""
    folders = []
    for level in range(depth):
        folders.append(FolderFactory(project=project, parent=folders[-1] if folders else None,
                                     title=f"Level {level + 1}", slug=f"level-{level + 1}"))
    return folders


@pytest.fixture
def contributor(member_with):
    return member_with(Role.CONTRIBUTOR)


@pytest.fixture
def folder(project):
    return FolderFactory(project=project, title="Guides", slug="guides")


@pytest.fixture
def article(project, folder):
    return ArticleFactory(project=project, folder=folder, title="Setup", slug="setup", content="# Setup\n\nRun it.",
                          sort_order=0)
