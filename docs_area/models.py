from django.conf import settings
from django.db import models
from django.db.models import Q

from attachments.models import StoredFile
from projects.models import Project

TITLE_MAX = 255
SLUG_MAX = 255
CONTENT_MAX = 200_000
MESSAGE_MAX = 20_000


class LiveQuerySet(models.QuerySet):
    def live(self):
        """Not soft-deleted."""
        return self.filter(deleted_at__isnull=True)


class TreeEntry(models.Model):
    """What folders and articles share: a titled place in a project's tree, with a slug unique among its kind."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="doc_%(class)ss")
    title = models.CharField(max_length=TITLE_MAX)
    slug = models.SlugField(max_length=SLUG_MAX, allow_unicode=True)
    sort_order = models.IntegerField(default=0)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    deleted_at = models.DateTimeField(null=True, blank=True)

    objects = LiveQuerySet.as_manager()

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return self.title


class Folder(TreeEntry):
    # Deleting a folder through the API is soft and reparents its children first; SET_NULL only
    # matters for a hard delete in the admin, where the children land at the root instead of vanishing.
    parent = models.ForeignKey("self", on_delete=models.SET_NULL, null=True, blank=True, related_name="children")

    class Meta:
        constraints = [
            # Live folders only: a deleted folder's slug is free again.
            models.UniqueConstraint(fields=["project", "slug"], condition=Q(deleted_at__isnull=True),
                                    name="docs_folder_unique_live_slug"),
        ]
        indexes = [models.Index(fields=["project", "parent", "sort_order"], name="docs_folder_level_idx")]


class Article(TreeEntry):
    folder = models.ForeignKey(Folder, on_delete=models.SET_NULL, null=True, blank=True, related_name="articles")
    content = models.TextField(blank=True, max_length=CONTENT_MAX, help_text="Markdown")
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                   related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "slug"], condition=Q(deleted_at__isnull=True),
                                    name="docs_article_unique_live_slug"),
        ]
        indexes = [models.Index(fields=["project", "folder", "sort_order"], name="docs_article_level_idx")]


class ArticleVersion(models.Model):
    """One edit of an article's title or content: who made it and when, and the pair it replaced."""

    article = models.ForeignKey(Article, on_delete=models.CASCADE, related_name="versions")
    title = models.CharField(max_length=TITLE_MAX)
    content = models.TextField(blank=True)
    edited_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["article", "-created_at"], name="docs_version_article_idx")]

    def __str__(self) -> str:
        return f"{self.title} ({self.created_at:%Y-%m-%d %H:%M})"


class ArticleComment(models.Model):
    article = models.ForeignKey(Article, on_delete=models.CASCADE, related_name="comments")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    message = models.TextField(max_length=MESSAGE_MAX)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    deleted_at = models.DateTimeField(null=True, blank=True)

    objects = LiveQuerySet.as_manager()

    class Meta:
        indexes = [models.Index(fields=["article", "created_at"], name="docs_comment_article_idx")]

    def __str__(self) -> str:
        return f"comment {self.pk} on article {self.article_id}"


class ArticleAttachment(StoredFile):
    article = models.ForeignKey(Article, on_delete=models.CASCADE, related_name="attachments")
