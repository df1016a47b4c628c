"""Every write of the documentation area, one function per action.

Each takes the project's row lock first: slugs are chosen and the folder tree is checked for
cycles while no other documentation write of the project can change them (the unique constraints
on live slugs stay as the backstop). On SQLite the IMMEDIATE transactions serialize writes anyway.
"""

from collections.abc import Callable

from django.conf import settings
from django.db import transaction
from django.db.models import Max, QuerySet
from django.utils import timezone
from django.utils.text import slugify

from accounts.models import User
from attachments import files
from attachments.uploads import Upload
from core.errors import RuleViolation
from core.events import Event
from core.rows import UNCHANGED, found, locked
from projects.models import Project

from . import broadcast, selectors
from .models import SLUG_MAX, TITLE_MAX, Article, ArticleAttachment, ArticleComment, ArticleVersion, Folder

COPY_SUFFIX = " (copy)"
# Room for "-<n>" after the title's slug.
SLUG_BASE_MAX = SLUG_MAX - 12


def _unique_slug(taken: QuerySet, title: str, fallback: str) -> str:
    """The title's slug, or the first free `slug-2`, `slug-3`, … among the live rows of `taken`."""
    base = slugify(title, allow_unicode=True)[:SLUG_BASE_MAX].strip("-") or fallback
    used = set(taken.filter(slug__startswith=base).values_list("slug", flat=True))
    slug, number = base, 2
    while slug in used:
        slug, number = f"{base}-{number}", number + 1
    return slug


def _folder_slug(project_id: int, title: str, *, exclude: int | None = None) -> str:
    return _unique_slug(Folder.objects.live().filter(project_id=project_id).exclude(pk=exclude), title, "folder")


def _article_slug(project_id: int, title: str, *, exclude: int | None = None) -> str:
    return _unique_slug(Article.objects.live().filter(project_id=project_id).exclude(pk=exclude), title, "article")


def _end_of(level: QuerySet) -> int:
    last = level.aggregate(last=Max("sort_order"))["last"]
    return 0 if last is None else last + 1


def _folder_for(project_id: int, folder_id: int | None, field: str) -> Folder | None:
    """A live folder of the project named in a body (None for the root); anything else is a 422 on `field`."""
    if folder_id is None:
        return None
    folder = Folder.objects.live().filter(project_id=project_id, pk=folder_id).first()
    if folder is None:
        raise RuleViolation(f"{field}: folder not found in this project", field=field)
    return folder


def _soft_delete(row) -> None:
    row.deleted_at = timezone.now()
    row.save(update_fields=["deleted_at", "updated_at"])


def _relocked(model, obj):
    """The object read again, locked, under the project's lock; deleted meanwhile: 404."""
    return locked(model.objects.live(), obj.pk, f"{model._meta.verbose_name} not found")


def _check_depth(parents: dict[int, int | None], parent_id: int | None, height: int) -> None:
    """A subtree `height` levels high placed under `parent_id` must end within DOCS_MAX_FOLDER_DEPTH levels
    of the root (the pages and the breadcrumbs walk every level)."""
    limit = settings.DOCS_MAX_FOLDER_DEPTH
    if len(selectors.ancestry(parents, parent_id)) + height > limit:
        raise RuleViolation(f"parent_id: folders nest at most {limit} levels deep", field="parent_id")


@transaction.atomic
def create_folder(*, project: Project, title: str, parent_id: int | None, actor: User) -> Folder:
    Project.objects.lock(project.pk)
    parent = _folder_for(project.pk, parent_id, "parent_id")
    _check_depth(selectors.folder_parents(project_id=project.pk), parent_id, 1)
    folder = Folder.objects.create(
        project=project, parent=parent, title=title, slug=_folder_slug(project.pk, title),
        sort_order=_end_of(selectors.level_folders(project=project, parent_id=parent_id)), created_by=actor)
    broadcast.announce_folder(folder=folder, actor=actor)
    return folder


@transaction.atomic
def update_folder(*, folder: Folder, actor: User, title: str = UNCHANGED,
                  parent_id: int | None = UNCHANGED) -> Folder:
    Project.objects.lock(folder.project_id)
    folder = _relocked(Folder, folder)
    if title is not UNCHANGED and title != folder.title:
        folder.title, folder.slug = title, _folder_slug(folder.project_id, title, exclude=folder.pk)
    if parent_id is not UNCHANGED and parent_id != folder.parent_id:
        if parent_id == folder.pk:
            raise RuleViolation("parent_id: a folder cannot be its own parent", field="parent_id")
        parent = _folder_for(folder.project_id, parent_id, "parent_id")
        parents = selectors.folder_parents(project_id=folder.project_id)
        if folder.pk in selectors.ancestry(parents, parent_id):
            raise RuleViolation("parent_id: a folder cannot be moved under one of its own subfolders",
                                field="parent_id")
        _check_depth(parents, parent_id, selectors.subtree_height(parents, folder.pk))
        folder.parent = parent
        folder.sort_order = _end_of(selectors.level_folders(project=folder.project, parent_id=parent_id))
    folder.save()
    broadcast.announce_folder(folder=folder, actor=actor)
    return folder


@transaction.atomic
def delete_folder(*, folder: Folder, actor: User) -> int | None:
    """Soft delete; its live subfolders and articles move up to its parent, which is returned."""
    Project.objects.lock(folder.project_id)
    folder = _relocked(Folder, folder)
    Folder.objects.live().filter(parent=folder).update(parent_id=folder.parent_id, updated_at=timezone.now())
    Article.objects.live().filter(folder=folder).update(folder_id=folder.parent_id)
    _soft_delete(folder)
    broadcast.announce_folder(folder=folder, actor=actor)
    return folder.parent_id


@transaction.atomic
def create_article(*, project: Project, title: str, content: str, folder_id: int | None, actor: User) -> Article:
    Project.objects.lock(project.pk)
    folder = _folder_for(project.pk, folder_id, "folder_id")
    article = Article.objects.create(
        project=project, folder=folder, title=title, slug=_article_slug(project.pk, title), content=content,
        sort_order=_end_of(selectors.level_articles(project=project, folder_id=folder_id)), created_by=actor)
    broadcast.announce_article(Event.DOCS_ARTICLE_CREATED, article=article, actor=actor)
    return article


@transaction.atomic
def update_article(*, article: Article, actor: User, title: str = UNCHANGED, content: str = UNCHANGED,
                   folder_id: int | None = UNCHANGED, precondition: Callable[[Article], None] | None = None) -> Article:
    """Sets `updated_by` to the caller; a change of title or content keeps the previous pair as a version.
    `precondition` is called with the locked article before anything is written, and refuses by raising."""
    Project.objects.lock(article.project_id)
    article = _relocked(Article, article)
    if precondition is not None:
        precondition(article)
    new_title = article.title if title is UNCHANGED else title
    new_content = article.content if content is UNCHANGED else content
    if (new_title, new_content) != (article.title, article.content):
        ArticleVersion.objects.create(article=article, title=article.title, content=article.content, edited_by=actor)
    if new_title != article.title:
        article.slug = _article_slug(article.project_id, new_title, exclude=article.pk)
    article.title, article.content = new_title, new_content
    if folder_id is not UNCHANGED and folder_id != article.folder_id:
        article.folder = _folder_for(article.project_id, folder_id, "folder_id")
        article.sort_order = _end_of(selectors.level_articles(project=article.project, folder_id=folder_id))
    article.updated_by = actor
    article.save()
    broadcast.announce_article(Event.DOCS_ARTICLE_UPDATED, article=article, actor=actor)
    return article


@transaction.atomic
def delete_article(*, article: Article, actor: User) -> None:
    """Soft delete: its comments, attachments and versions stay with it, out of sight."""
    Project.objects.lock(article.project_id)
    article = _relocked(Article, article)
    _soft_delete(article)
    broadcast.announce_article(Event.DOCS_ARTICLE_DELETED, article=article, actor=actor)


def copy_article(*, article: Article, actor: User) -> Article:
    """A new article beside the original, owned by the caller, with copies of its attachment files of its own.

    The files are copied before the transaction (as uploads are stored); if the original is deleted
    meanwhile the copy fails with 404 and the copied files are removed.
    """
    originals = list(selectors.article_attachments(article=article))
    records = [ArticleAttachment(original_name=original.original_name, filesize=original.filesize,
                                 mime_type=original.mime_type, uploaded_by=actor) for original in originals]

    def commit() -> Article:
        Project.objects.lock(article.project_id)
        source = _relocked(Article, article)
        title = (source.title[:TITLE_MAX - len(COPY_SUFFIX)] + COPY_SUFFIX)
        copy = Article.objects.create(
            project_id=source.project_id, folder_id=source.folder_id, title=title, content=source.content,
            slug=_article_slug(source.project_id, title),
            sort_order=_end_of(selectors.level_articles(project=source.project, folder_id=source.folder_id)),
            created_by=actor)
        for record in records:
            record.article = copy
        ArticleAttachment.objects.bulk_create(records)
        broadcast.announce_article(Event.DOCS_ARTICLE_CREATED, article=copy, actor=actor)
        return copy

    return files.store_then_commit(records, files.copied_contents(originals), commit)


def _live_article_locked(article: Article) -> Article:
    Project.objects.lock(article.project_id)
    return _relocked(Article, article)


@transaction.atomic
def add_comment(*, article: Article, author: User, message: str) -> ArticleComment:
    article = _live_article_locked(article)
    return ArticleComment.objects.create(article=article, user=author, message=message)


@transaction.atomic
def edit_comment(*, comment: ArticleComment, message: str, actor: User) -> ArticleComment:
    _live_article_locked(comment.article)
    comment = _relocked(ArticleComment, comment)
    if comment.message != message:
        comment.message = message
        comment.save(update_fields=["message", "updated_at"])
    return comment


@transaction.atomic
def delete_comment(*, comment: ArticleComment, actor: User) -> None:
    """Soft delete: the row stays, the article no longer shows it."""
    _live_article_locked(comment.article)
    _soft_delete(_relocked(ArticleComment, comment))


def _check_room(article: Article, adding: int) -> None:
    """An article holds at most DOCS_MAX_ATTACHMENTS_PER_ARTICLE files: what a copy of it reads and writes."""
    limit = settings.DOCS_MAX_ATTACHMENTS_PER_ARTICLE
    if selectors.article_attachments(article=article).count() + adding > limit:
        raise RuleViolation(f"files: an article holds at most {limit} attachments", field="files")


def attach_files(*, article: Article, uploads: list[Upload], actor: User) -> list[ArticleAttachment]:
    """Store checked uploads on the article: all of them or none."""
    _check_room(article, len(uploads))  # before the files are written; again under the lock, for certain
    attachments = files.records_for(ArticleAttachment, uploads, uploaded_by=actor, article=article)

    def commit() -> list[ArticleAttachment]:
        _live_article_locked(article)
        _check_room(article, len(uploads))
        return ArticleAttachment.objects.bulk_create(attachments)

    return files.store_then_commit(attachments, files.uploaded_contents(uploads), commit)


@transaction.atomic
def delete_attachment(*, attachment: ArticleAttachment, actor: User) -> None:
    """The record goes now, the stored file once that is committed: a rollback keeps both."""
    _live_article_locked(attachment.article)
    attachment = found(ArticleAttachment.objects.filter(pk=attachment.pk), "attachment not found")
    attachment.delete()
    files.delete_file_on_commit(attachment)


def _reorder(model, project_id: int, ids: list[int], level_field: str, field: str) -> list:
    """The rows named by `ids`, each given its position; all must be live rows of one level of the project."""
    if len(ids) != len(set(ids)):
        raise RuleViolation(f"{field}: an id is listed twice", field=field)
    rows = model.objects.live().filter(project_id=project_id).in_bulk(ids)
    missing = [pk for pk in ids if pk not in rows]
    if missing:
        raise RuleViolation(f"{field}: no {model._meta.verbose_name} {missing[0]} in this project", field=field)
    if len({getattr(row, level_field) for row in rows.values()}) > 1:
        raise RuleViolation(f"{field}: all must be in the same folder", field=field)
    for position, pk in enumerate(ids):
        rows[pk].sort_order = position
    return list(rows.values())


@transaction.atomic
def sort_docs(*, project: Project, folder_ids: list[int] | None, article_ids: list[int] | None, actor: User) -> None:
    """Array position becomes sort_order; every id is checked before anything is written."""
    Project.objects.lock(project.pk)
    folders = _reorder(Folder, project.pk, folder_ids or [], "parent_id", "folders")
    articles = _reorder(Article, project.pk, article_ids or [], "folder_id", "articles")
    Folder.objects.bulk_update(folders, ["sort_order"])
    Article.objects.bulk_update(articles, ["sort_order"])
