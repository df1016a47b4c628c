"""Every read of the documentation area that feeds a response or a page, in a fixed number of queries."""

from collections import defaultdict
from dataclasses import dataclass

from django.db.models import QuerySet

from core.rows import found
from projects.models import Project

from .models import Article, ArticleAttachment, ArticleComment, ArticleVersion, Folder


def folder_in_project(*, project: Project, folder_id: int) -> Folder:
    return found(Folder.objects.live().filter(project=project, pk=folder_id), "folder not found")


def article_in_project(*, project: Project, article_id: int) -> Article:
    return found(Article.objects.live().filter(project=project, pk=article_id), "article not found")


def comment_in_project(*, project: Project, comment_id: int) -> ArticleComment:
    """A live comment on a live article of the project."""
    return found(ArticleComment.objects.live().select_related("article")
                 .filter(pk=comment_id, article__project=project, article__deleted_at__isnull=True), "comment not found")


def attachment_in_project(*, project: Project, attachment_id: int) -> ArticleAttachment:
    """An attachment of a live article of the project."""
    return found(ArticleAttachment.objects.select_related("article")
                 .filter(pk=attachment_id, article__project=project, article__deleted_at__isnull=True),
                 "attachment not found")


def folder_parents(*, project_id: int) -> dict[int, int | None]:
    """Every live folder of the project and its parent, in one query: the tree that breadcrumbs and the
    cycle check walk in Python, so their cost does not grow with the depth of the tree."""
    return dict(Folder.objects.live().filter(project_id=project_id).values_list("id", "parent_id"))


def ancestry(parents: dict[int, int | None], folder_id: int | None) -> list[int]:
    """The ids from the root down to `folder_id` included; [] at the root."""
    chain, seen = [], set()
    # `seen` stops at a cycle a hard edit in the admin could leave; the API never makes one.
    while folder_id is not None and folder_id in parents and folder_id not in seen:
        seen.add(folder_id)
        chain.append(folder_id)
        folder_id = parents[folder_id]
    return chain[::-1]


def subtree_height(parents: dict[int, int | None], folder_id: int) -> int:
    """How many levels the folder and its live subfolders span: 1 for a folder without subfolders."""
    children: dict[int | None, list[int]] = {}
    for child, parent in parents.items():
        children.setdefault(parent, []).append(child)
    height, level = 0, [folder_id]
    while level and height <= len(parents):  # the bound stops at a cycle a hard edit could leave
        height += 1
        level = [child for parent in level for child in children.get(parent, [])]
    return height


def breadcrumbs(*, project_id: int, folder_id: int | None) -> list[dict]:
    """`{id, title, slug}` of each folder from the root down to `folder_id` included: two queries at any depth."""
    if folder_id is None:
        return []
    chain = ancestry(folder_parents(project_id=project_id), folder_id)
    folders = Folder.objects.in_bulk(chain)
    return [{"id": pk, "title": folders[pk].title, "slug": folders[pk].slug} for pk in chain]


def level_folders(*, project: Project, parent_id: int | None) -> QuerySet[Folder]:
    return Folder.objects.live().filter(project=project, parent_id=parent_id).order_by("sort_order", "id")


def level_articles(*, project: Project, folder_id: int | None) -> QuerySet[Article]:
    return Article.objects.live().filter(project=project, folder_id=folder_id).order_by("sort_order", "id")


@dataclass(frozen=True)
class Listing:
    current_folder: Folder | None
    breadcrumbs: list[dict]
    folders: list[Folder]
    articles: list[Article]


def listing(*, project: Project, folder: Folder | None) -> Listing:
    folder_id = folder.pk if folder is not None else None
    return Listing(current_folder=folder, breadcrumbs=breadcrumbs(project_id=project.pk, folder_id=folder_id),
                   folders=list(level_folders(project=project, parent_id=folder_id)),
                   articles=list(level_articles(project=project, folder_id=folder_id)))


def article_comments(*, article: Article) -> QuerySet[ArticleComment]:
    return ArticleComment.objects.live().filter(article=article).select_related("user").order_by("created_at", "id")


def article_attachments(*, article: Article) -> QuerySet[ArticleAttachment]:
    return ArticleAttachment.objects.filter(article=article).order_by("created_at", "id")


def article_versions(*, article: Article) -> QuerySet[ArticleVersion]:
    return (ArticleVersion.objects.filter(article=article).select_related("edited_by")
            .order_by("-created_at", "-id"))


@dataclass(frozen=True)
class OutlineStep:
    """One step of the tree as a page writes it: `open` and `close` a level, `folder` (its level follows,
    then `end`), `article`."""

    kind: str
    entry: Folder | Article | None = None


OPEN, CLOSE, END = OutlineStep("open"), OutlineStep("close"), OutlineStep("end")


def tree_outline(*, project: Project) -> list[OutlineStep]:
    """The whole live tree of the project for the web page, depth first, each level's folders before its
    articles; [] when empty. Flat, so that the page writes it in one loop at any depth (a template that
    includes itself per level ran out of Python's stack): two queries, walked with a stack of our own."""
    folders = list(Folder.objects.live().filter(project=project).order_by("sort_order", "id"))
    articles = list(Article.objects.live().filter(project=project).only("id", "folder_id", "title", "slug")
                    .order_by("sort_order", "id"))
    live = {folder.pk for folder in folders}
    inside: dict[int | None, list[Folder | Article]] = defaultdict(list)
    # An entry whose folder is not live (a hard edit in the admin) is shown at the root.
    for folder in folders:
        inside[folder.parent_id if folder.parent_id in live else None].append(folder)
    for article in articles:
        inside[article.folder_id if article.folder_id in live else None].append(article)
    if not inside[None]:
        return []
    steps, levels = [OPEN], [iter(inside[None])]
    while levels:
        entry = next(levels[-1], None)
        if entry is None:
            levels.pop()
            steps += [CLOSE, END] if levels else [CLOSE]
        elif isinstance(entry, Folder):
            steps.append(OutlineStep("folder", entry))
            if inside[entry.pk]:
                steps.append(OPEN)
                levels.append(iter(inside[entry.pk]))
            else:
                steps.append(END)
        else:
            steps.append(OutlineStep("article", entry))
    return steps
