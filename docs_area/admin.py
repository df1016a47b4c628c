from django.contrib import admin

from core.admin import HistoryInline
from tickets.admin import DeletedFilter

from . import services
from .models import Article, ArticleAttachment, ArticleComment, ArticleVersion, Folder


@admin.register(Folder)
class FolderAdmin(admin.ModelAdmin):
    list_display = ("title", "project", "parent", "slug", "sort_order", "deleted_at")
    list_filter = ("project", DeletedFilter)
    search_fields = ("title", "slug")
    list_select_related = ("project", "parent")
    raw_id_fields = ("project", "parent", "created_by")
    readonly_fields = ("slug", "created_at", "updated_at")


class ArticleVersionInline(HistoryInline):
    model = ArticleVersion
    fields = ("created_at", "edited_by", "title", "content")


@admin.register(Article)
class ArticleAdmin(admin.ModelAdmin):
    list_display = ("title", "project", "folder", "slug", "updated_by", "updated_at", "deleted_at")
    list_filter = ("project", DeletedFilter)
    search_fields = ("title", "slug", "content")
    list_select_related = ("project", "folder", "updated_by")
    raw_id_fields = ("project", "folder", "created_by", "updated_by")
    readonly_fields = ("slug", "created_at", "updated_at")
    inlines = [ArticleVersionInline]


@admin.register(ArticleComment)
class ArticleCommentAdmin(admin.ModelAdmin):
    list_display = ("id", "article", "user", "created_at", "deleted_at")
    list_filter = (DeletedFilter,)
    search_fields = ("message", "user__username")
    list_select_related = ("article", "user")
    raw_id_fields = ("article", "user")


@admin.register(ArticleAttachment)
class ArticleAttachmentAdmin(admin.ModelAdmin):
    """Files come in through the API; here they can be looked at and removed, with their stored file."""

    list_display = ("original_name", "article", "mime_type", "filesize", "uploaded_by", "created_at")
    search_fields = ("original_name",)
    list_select_related = ("article", "uploaded_by")
    fields = ("article", "original_name", "mime_type", "filesize", "file", "uploaded_by", "created_at")
    readonly_fields = fields

    def has_add_permission(self, request):
        return False

    def delete_model(self, request, obj):
        services.delete_attachment(attachment=obj, actor=request.user)

    def delete_queryset(self, request, queryset):
        for attachment in queryset:
            services.delete_attachment(attachment=attachment, actor=request.user)
