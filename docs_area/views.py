from functools import cached_property

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from attachments.files import download_response
from attachments.schema import UPLOAD_REQUEST, download_responses
from attachments.uploads import accepted_uploads
from core.api.conditional import ETAG, IF_MATCH, IF_NONE_MATCH, NOT_MODIFIED, conditional_write, etag_of, with_etag
from core.api.inputs import validated
from core.api.schema import envelope, error_responses
from projects.models import Membership
from projects.permissions import OwnerOr
from projects.roles import Role
from projects.views import ProjectScopedViewSet

from . import selectors, services
from .serializers import (
    ArticleAttachmentOutput,
    ArticleCommentInput,
    ArticleCommentWrittenOutput,
    ArticleDetailPageOutput,
    ArticleOutput,
    ArticleVersionOutput,
    CreateArticleInput,
    CreateFolderInput,
    DocsFolderOutput,
    DocsListingOutput,
    DocsSortInput,
    UpdateArticleInput,
    UpdateFolderInput,
)

DOCS_DISABLED = "documentation is disabled for this project"
SUCCESS = envelope("DocsSuccess", success=True)
FOLDER = envelope("DocsFolderWritten", success=True, folder=DocsFolderOutput())
ARTICLE = envelope("DocsArticleWritten", success=True, article=ArticleOutput())
COMMENT = envelope("DocsCommentWritten", success=True, comment=ArticleCommentWrittenOutput())
READ_ERRORS = error_responses(401, 404)
WRITE_ERRORS = error_responses(401, 403, 404, 422)


class DocsScopedViewSet(ProjectScopedViewSet):
    """Every documentation route: a project with documentation switched off answers 404 like a missing
    one, right after membership and before the object, the role table or the body are looked at."""

    @cached_property
    def membership(self) -> Membership:
        membership = ProjectScopedViewSet.membership.func(self)
        if not membership.project.docs_enabled:
            raise Http404(DOCS_DISABLED)
        return membership


def _listing(membership: Membership, folder) -> dict:
    listing = selectors.listing(project=membership.project, folder=folder)
    return DocsListingOutput({"success": True, "role": membership.role, **vars(listing)}).data


class DocsViewSet(DocsScopedViewSet):
    required_roles = {"root": Role.VIEWER, "sort": Role.CONTRIBUTOR}

    @extend_schema(description="The root level: its folders and articles (with content).",
                   responses={200: DocsListingOutput, **READ_ERRORS})
    def root(self, request, project_id):
        """List the documentation root."""
        return Response(_listing(self.membership, None))

    @extend_schema(description="Array position becomes `sort_order`. All ids of a list must be live ones of this "
                               "project sharing one parent; otherwise 422 and nothing changes.",
                   request=DocsSortInput, responses={200: SUCCESS, **WRITE_ERRORS})
    def sort(self, request, project_id):
        """Reorder folders and articles."""
        data = validated(DocsSortInput, request.data)
        services.sort_docs(project=self.project, folder_ids=data.get("folders"), article_ids=data.get("articles"),
                           actor=request.user)
        return Response({"success": True})


class FolderViewSet(DocsScopedViewSet):
    schema_noun = "folder"
    required_roles = {"retrieve": Role.VIEWER, "create": Role.CONTRIBUTOR, "update": Role.CONTRIBUTOR,
                      "destroy": Role.CONTRIBUTOR}

    def find_object(self):
        if "folder_id" not in self.kwargs:
            return None
        return selectors.folder_in_project(project=self.project, folder_id=self.kwargs["folder_id"])

    @extend_schema(description="One folder's level: `current_folder` and the breadcrumbs from the root down to it.",
                   responses={200: DocsListingOutput, **READ_ERRORS})
    def retrieve(self, request, project_id, folder_id):
        """List a folder."""
        return Response(_listing(self.membership, self.object))

    @extend_schema(description="Folders nest at most 32 levels deep (the operator may change it): deeper, 422.",
                   request=CreateFolderInput, responses={201: FOLDER, **WRITE_ERRORS})
    def create(self, request, project_id):
        """Create a folder."""
        data = validated(CreateFolderInput, request.data)
        folder = services.create_folder(project=self.project, actor=request.user, **data)
        return Response({"success": True, "folder": DocsFolderOutput(folder).data}, status=status.HTTP_201_CREATED)

    @extend_schema(description="`parent_id` null moves the folder to the root; it cannot go under itself or any of "
                               "its subfolders, nor where its deepest subfolder would be more than 32 levels deep "
                               "(422).",
                   request=UpdateFolderInput, responses={200: FOLDER, **WRITE_ERRORS})
    def update(self, request, project_id, folder_id):
        """Rename or move a folder."""
        data = validated(UpdateFolderInput, request.data)
        folder = services.update_folder(folder=self.object, actor=request.user, **data)
        return Response({"success": True, "folder": DocsFolderOutput(folder).data})

    @extend_schema(description="Soft delete; its subfolders and articles move to its parent, whose id is returned.",
                   request=None, responses={
                       200: envelope("DocsFolderDeleted", success=True,
                                     parent_id=serializers.IntegerField(allow_null=True)), **WRITE_ERRORS})
    def destroy(self, request, project_id, folder_id):
        """Delete a folder."""
        parent_id = services.delete_folder(folder=self.object, actor=request.user)
        return Response({"success": True, "parent_id": parent_id})


class ArticleViewSet(DocsScopedViewSet):
    schema_noun = "article"
    required_roles = {"retrieve": Role.VIEWER, "versions": Role.VIEWER, "comment": Role.VIEWER,
                      "create": Role.CONTRIBUTOR, "update": Role.CONTRIBUTOR, "destroy": Role.CONTRIBUTOR,
                      "copy": Role.CONTRIBUTOR, "attach": Role.CONTRIBUTOR}
    upload_actions = frozenset({"attach"})

    def find_object(self):
        if "article_id" not in self.kwargs:
            return None
        return selectors.article_in_project(project=self.project, article_id=self.kwargs["article_id"])

    def article_page(self, article) -> dict:
        """The article as its GET shows it to the caller."""
        return ArticleDetailPageOutput({
            "success": True, "role": self.membership.role, "current_user_id": self.request.user.pk,
            "article": article,
            "breadcrumbs": selectors.breadcrumbs(project_id=article.project_id, folder_id=article.folder_id),
            "attachments": selectors.article_attachments(article=article),
            "comments": selectors.article_comments(article=article),
        }).data

    def page_etag(self, article) -> str:
        return etag_of(self.article_page(article))

    @extend_schema(parameters=[IF_NONE_MATCH, ETAG],
                   responses={200: ArticleDetailPageOutput, **NOT_MODIFIED, **READ_ERRORS})
    def retrieve(self, request, project_id, article_id):
        """Get an article."""
        page = self.article_page(self.object)
        return with_etag(request, page, etag_of(page))

    @extend_schema(request=CreateArticleInput, responses={201: ARTICLE, **WRITE_ERRORS})
    def create(self, request, project_id):
        """Create an article."""
        data = validated(CreateArticleInput, request.data)
        article = services.create_article(project=self.project, actor=request.user, **data)
        return Response({"success": True, "article": ArticleOutput(article).data}, status=status.HTTP_201_CREATED)

    @extend_schema(description="Send only what changes; `folder_id` null moves the article to the root. The caller "
                               "becomes `updated_by`; a change of title or content keeps the previous pair as a "
                               "version.",
                   parameters=[IF_MATCH, ETAG], request=UpdateArticleInput,
                   responses={200: ARTICLE, **WRITE_ERRORS, **error_responses(412)})
    def update(self, request, project_id, article_id):
        """Update an article."""
        data = validated(UpdateArticleInput, request.data)
        article, etag = conditional_write(request, self.page_etag, lambda check: services.update_article(
            article=self.object, actor=request.user, precondition=check, **data))
        return Response({"success": True, "article": ArticleOutput(article).data}, headers={"ETag": etag})

    @extend_schema(request=None, responses={200: SUCCESS, **WRITE_ERRORS})
    def destroy(self, request, project_id, article_id):
        """Delete an article."""
        services.delete_article(article=self.object, actor=request.user)
        return Response({"success": True})

    @extend_schema(description="A copy in the same folder, titled with \" (copy)\", owned by the caller, with its "
                               "own copies of the attachment files.", request=None,
                   responses={201: ARTICLE, **WRITE_ERRORS})
    def copy(self, request, project_id, article_id):
        """Copy an article."""
        article = services.copy_article(article=self.object, actor=request.user)
        return Response({"success": True, "article": ArticleOutput(article).data}, status=status.HTTP_201_CREATED)

    @extend_schema(description="Earlier titles and contents, newest first: each is what an edit replaced, with who "
                               "made that edit and when.",
                   responses={200: envelope("ArticleVersionList", success=True,
                                            versions=ArticleVersionOutput(many=True)), **READ_ERRORS})
    def versions(self, request, project_id, article_id):
        """List an article's earlier versions."""
        versions = selectors.article_versions(article=self.object)
        return Response({"success": True, "versions": ArticleVersionOutput(versions, many=True).data})

    @extend_schema(description="Any member may comment.", request=ArticleCommentInput,
                   responses={201: COMMENT, **error_responses(401, 404, 422)})
    def comment(self, request, project_id, article_id):
        """Comment on an article."""
        message = validated(ArticleCommentInput, request.data)["message"]
        comment = services.add_comment(article=self.object, author=request.user, message=message)
        return Response({"success": True, "comment": ArticleCommentWrittenOutput(comment).data},
                        status=status.HTTP_201_CREATED)

    @extend_schema(description="Attach files to the article: contributor and up. An article holds at most 50 files "
                               "(the operator may change it): beyond, 422 and none is stored.", request=UPLOAD_REQUEST,
                   responses={200: envelope("ArticleAttachmentList", success=True,
                                            attachments=ArticleAttachmentOutput(many=True)), **WRITE_ERRORS})
    def attach(self, request, project_id, article_id):
        """Attach files to an article."""
        uploads = accepted_uploads(request)
        attachments = services.attach_files(article=self.object, uploads=uploads, actor=request.user)
        return Response({"success": True, "attachments": ArticleAttachmentOutput(attachments, many=True).data})


class ArticleCommentViewSet(DocsScopedViewSet):
    schema_noun = "comment"
    required_roles = {
        "update": OwnerOr(None, owners=lambda comment: {comment.user_id}, message="only its author can edit a comment"),
        "destroy": OwnerOr(Role.MANAGER, owners=lambda comment: {comment.user_id}),
    }

    def find_object(self):
        return selectors.comment_in_project(project=self.project, comment_id=self.kwargs["comment_id"])

    @extend_schema(description="Its author only.", request=ArticleCommentInput, responses={200: COMMENT, **WRITE_ERRORS})
    def update(self, request, project_id, comment_id):
        """Edit an article comment."""
        message = validated(ArticleCommentInput, request.data)["message"]
        comment = services.edit_comment(comment=self.object, message=message, actor=request.user)
        return Response({"success": True, "comment": ArticleCommentWrittenOutput(comment).data})

    @extend_schema(description="Soft delete: its author, or a manager.", request=None,
                   responses={200: SUCCESS, **WRITE_ERRORS})
    def destroy(self, request, project_id, comment_id):
        """Delete an article comment."""
        services.delete_comment(comment=self.object, actor=request.user)
        return Response({"success": True})


class ArticleAttachmentViewSet(DocsScopedViewSet):
    schema_noun = "attachment"
    required_roles = {"download": Role.VIEWER, "destroy": Role.CONTRIBUTOR}

    def perform_content_negotiation(self, request, force=False):
        # A download serves any client, whatever its Accept header; an error is still JSON.
        return super().perform_content_negotiation(request, force=True)

    def find_object(self):
        return selectors.attachment_in_project(project=self.project, attachment_id=self.kwargs["attachment_id"])

    @extend_schema(description="The file as uploaded, never kept by shared caches. Raster images and PDF come "
                               "`inline`, every other type as a download.",
                   responses={**download_responses("The file, with its own media type; Cache-Control: private"),
                              **READ_ERRORS})
    def download(self, request, project_id, attachment_id):
        """Download an article attachment."""
        return download_response(self.object, private=True)

    @extend_schema(description="Remove the attachment and its stored file: contributor and up.", request=None,
                   responses={200: SUCCESS, **WRITE_ERRORS})
    def destroy(self, request, project_id, attachment_id):
        """Delete an article attachment."""
        services.delete_attachment(attachment=self.object, actor=request.user)
        return Response({"success": True})
