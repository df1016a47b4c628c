"""The documentation pages for a browser logged in with a session: the folder tree beside an article, and the
controls to write (new folder, new article, edit, comment, upload) for the roles the API lets write; the page's
script (static/js/docs.js) calls the same API."""

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import render
from django.utils.safestring import mark_safe

from core.markdown import render_markdown
from projects import selectors as project_selectors
from projects.models import Membership
from projects.permissions import admits

from . import selectors
from .models import Folder
from .views import ArticleViewSet


def _docs_membership(request, project_id: int) -> Membership:
    """Like the API: a non-member and a project with documentation off both see a 404."""
    membership = project_selectors.membership_for(user=request.user, project_id=project_id)
    if not membership.project.docs_enabled:
        raise Http404("documentation is disabled for this project")
    return membership


def _page(request, membership: Membership, **context):
    project = membership.project
    return render(request, "docs_area/docs.html", {
        "project": project, "role": membership.role,
        # The API's own role table: the page shows the controls of what the API lets this member do.
        "can_write": admits(ArticleViewSet.required_roles["create"], membership),
        "folders": Folder.objects.live().filter(project=project).order_by("title", "id").only("id", "title"),
        "tree": selectors.tree_outline(project=project), **context})


@login_required
def docs_home(request, project_id: int):
    membership = _docs_membership(request, project_id)
    return _page(request, membership, listing=selectors.listing(project=membership.project, folder=None))


@login_required
def article_page(request, project_id: int, article_id: int):
    membership = _docs_membership(request, project_id)
    article = selectors.article_in_project(project=membership.project, article_id=article_id)
    return _page(
        request, membership, article=article,
        # Safe to mark: render_markdown's output went through the sanitizer's allow-list.
        body=mark_safe(render_markdown(article.content)),
        breadcrumbs=selectors.breadcrumbs(project_id=article.project_id, folder_id=article.folder_id),
        attachments=selectors.article_attachments(article=article),
        # Safe to mark, as the body: sanitized by render_markdown.
        comments=[(comment, mark_safe(render_markdown(comment.message)))
                  for comment in selectors.article_comments(article=article)],
    )
