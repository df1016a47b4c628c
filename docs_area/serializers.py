from rest_framework import serializers

from core.api.fields import ObjectIdField
from core.time import timestamp

from .models import CONTENT_MAX, MESSAGE_MAX, TITLE_MAX, Article, ArticleAttachment, ArticleComment, Folder

# ---- input -----------------------------------------------------------------------------------------------


class CreateFolderInput(serializers.Serializer):
    title = serializers.CharField(max_length=TITLE_MAX)
    parent_id = ObjectIdField(required=False, allow_null=True, default=None)


class UpdateFolderInput(serializers.Serializer):
    """Only the fields sent change: `parent_id` null moves the folder to the root, left out keeps it."""

    title = serializers.CharField(max_length=TITLE_MAX, required=False)
    parent_id = ObjectIdField(required=False, allow_null=True)


class CreateArticleInput(serializers.Serializer):
    title = serializers.CharField(max_length=TITLE_MAX)
    content = serializers.CharField(max_length=CONTENT_MAX, required=False, allow_blank=True, trim_whitespace=False,
                                    default="")
    folder_id = ObjectIdField(required=False, allow_null=True, default=None)


class UpdateArticleInput(serializers.Serializer):
    """Only the fields sent change: `folder_id` null moves the article to the root, left out keeps it."""

    title = serializers.CharField(max_length=TITLE_MAX, required=False)
    content = serializers.CharField(max_length=CONTENT_MAX, required=False, allow_blank=True, trim_whitespace=False)
    folder_id = ObjectIdField(required=False, allow_null=True)


class ArticleCommentInput(serializers.Serializer):
    message = serializers.CharField(max_length=MESSAGE_MAX)


class DocsSortInput(serializers.Serializer):
    folders = serializers.ListField(child=ObjectIdField(), required=False, max_length=10_000)
    articles = serializers.ListField(child=ObjectIdField(), required=False, max_length=10_000)

    def validate(self, data):
        if "folders" not in data and "articles" not in data:
            raise serializers.ValidationError({"folders": "folders or articles is required"})
        return data


# ---- output ----------------------------------------------------------------------------------------------


class DocsFolderOutput(serializers.ModelSerializer):
    slug = serializers.CharField(read_only=True)  # a SlugField's schema says `^[-\w]+$`: ASCII to a JSON Schema regex

    class Meta:
        model = Folder
        fields = ["id", "project_id", "parent_id", "title", "slug", "sort_order"]


class ArticleOutput(serializers.ModelSerializer):
    """The Article resource, as listings and write answers carry it."""

    slug = serializers.CharField(read_only=True)  # unicode slugs, see DocsFolderOutput

    class Meta:
        model = Article
        fields = ["id", "project_id", "folder_id", "title", "slug", "content", "sort_order"]


class ArticleDetailOutput(serializers.ModelSerializer):
    created_by = serializers.IntegerField(source="created_by_id")
    updated_by = serializers.IntegerField(source="updated_by_id", allow_null=True)
    slug = serializers.CharField(read_only=True)  # unicode slugs, see DocsFolderOutput

    class Meta:
        model = Article
        fields = ["id", "project_id", "folder_id", "title", "slug", "content", "created_by", "updated_by"]


class DocsBreadcrumbOutput(serializers.Serializer):
    id = serializers.IntegerField()
    title = serializers.CharField()
    slug = serializers.CharField()


class DocsListingOutput(serializers.Serializer):
    """A level of the tree (the root, or one folder); `role` comes from the caller's membership."""

    success = serializers.BooleanField(default=True)
    role = serializers.CharField()
    current_folder = DocsFolderOutput(allow_null=True)
    breadcrumbs = DocsBreadcrumbOutput(many=True)
    folders = DocsFolderOutput(many=True)
    articles = ArticleOutput(many=True)


class ArticleCommentOutput(serializers.ModelSerializer):
    user_name = serializers.CharField(source="user.display_name")

    class Meta:
        model = ArticleComment
        fields = ["id", "user_id", "user_name", "message"]


class ArticleCommentWrittenOutput(ArticleCommentOutput):
    created_at = serializers.SerializerMethodField()

    class Meta(ArticleCommentOutput.Meta):
        fields = ArticleCommentOutput.Meta.fields + ["created_at"]

    def get_created_at(self, comment) -> str:
        return timestamp(comment.created_at)


class ArticleAttachmentOutput(serializers.ModelSerializer):
    class Meta:
        model = ArticleAttachment
        fields = ["id", "article_id", "original_name", "filesize", "mime_type"]


class ArticleDetailPageOutput(serializers.Serializer):
    success = serializers.BooleanField(default=True)
    role = serializers.CharField()
    current_user_id = serializers.IntegerField()
    article = ArticleDetailOutput()
    breadcrumbs = DocsBreadcrumbOutput(many=True)
    attachments = ArticleAttachmentOutput(many=True)
    comments = ArticleCommentOutput(many=True)


class VersionEditorOutput(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField(source="display_name")


class ArticleVersionOutput(serializers.Serializer):
    id = serializers.IntegerField()
    title = serializers.CharField()
    content = serializers.CharField()
    edited_by = VersionEditorOutput()
    created_at = serializers.SerializerMethodField()

    def get_created_at(self, version) -> str:
        return timestamp(version.created_at)
