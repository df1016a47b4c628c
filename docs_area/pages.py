"""The documentation pages for a browser logged in with a session: the folder tree beside an article."""

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import render
from django.utils.safestring import mark_safe

from core.markdown import render_markdown
from projects import selectors as project_selectors
from projects.models import Membership

from . import selectors


def _docs_membership(request, project_id: int) -> Membership:
    """Like the API: a non-member and a project with documentation off both see a 404."""
    membership = project_selectors.membership_for(user=request.user, project_id=project_id)
    if not membership.project.docs_enabled:
        raise Http404("documentation is disabled for this project")
    return membership


def _page(request, membership: Membership, **context):
    return render(request, "docs_area/docs.html", {
        "project": membership.project, "role": membership.role,
        "tree": selectors.tree_outline(project=membership.project), **context})


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
        comments=selectors.article_comments(article=article),
    )
