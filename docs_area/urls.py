from django.urls import path

from .views import ArticleAttachmentViewSet, ArticleCommentViewSet, ArticleViewSet, DocsViewSet, FolderViewSet

DOCS = "projects/<id:project_id>/docs"
FOLDER = f"{DOCS}/folders/<id:folder_id>"
ARTICLE = f"{DOCS}/articles/<id:article_id>"

urlpatterns = [
    path(DOCS, DocsViewSet.as_view({"get": "root"}), name="docs-root"),
    path(f"{DOCS}/sort", DocsViewSet.as_view({"post": "sort"}), name="docs-sort"),
    path(f"{DOCS}/folders", FolderViewSet.as_view({"post": "create"}), name="docs-folder-create"),
    path(FOLDER, FolderViewSet.as_view({"get": "retrieve", "post": "update"}), name="docs-folder"),
    path(f"{FOLDER}/delete", FolderViewSet.as_view({"post": "destroy"}), name="docs-folder-delete"),
    path(f"{DOCS}/articles", ArticleViewSet.as_view({"post": "create"}), name="docs-article-create"),
    path(ARTICLE, ArticleViewSet.as_view({"get": "retrieve", "post": "update"}), name="docs-article"),
    path(f"{ARTICLE}/delete", ArticleViewSet.as_view({"post": "destroy"}), name="docs-article-delete"),
    path(f"{ARTICLE}/copy", ArticleViewSet.as_view({"post": "copy"}), name="docs-article-copy"),
    path(f"{ARTICLE}/versions", ArticleViewSet.as_view({"get": "versions"}), name="docs-article-versions"),
    path(f"{ARTICLE}/comments", ArticleViewSet.as_view({"post": "comment"}), name="docs-article-comment"),
    path(f"{ARTICLE}/attachments", ArticleViewSet.as_view({"post": "attach"}), name="docs-article-attachments"),
    path(f"{DOCS}/comments/<id:comment_id>", ArticleCommentViewSet.as_view({"post": "update"}),
         name="docs-comment-update"),
    path(f"{DOCS}/comments/<id:comment_id>/delete", ArticleCommentViewSet.as_view({"post": "destroy"}),
         name="docs-comment-delete"),
    path(f"{DOCS}/attachments/<id:attachment_id>", ArticleAttachmentViewSet.as_view({"get": "download"}),
         name="docs-attachment-download"),
    path(f"{DOCS}/attachments/<id:attachment_id>/delete", ArticleAttachmentViewSet.as_view({"post": "destroy"}),
         name="docs-attachment-delete"),
]
