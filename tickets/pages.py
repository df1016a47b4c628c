"""The web pages: the caller's projects and the live board, for a browser logged in with a session."""

from django.contrib.auth.decorators import login_required
from django.http import Http404, JsonResponse
from django.shortcuts import render
from rest_framework.exceptions import NotFound

from projects import selectors as project_selectors
from projects.models import Membership

from .board import board_payload


def page_membership(request, project_id: int) -> Membership:
    try:
        return project_selectors.membership_for(user=request.user, project_id=project_id)
    except NotFound as error:
        raise Http404(error.detail) from error


@login_required
def project_list(request):
    memberships = project_selectors.memberships_of(user=request.user)
    return render(request, "tickets/project_list.html", {"memberships": memberships})


@login_required
def board(request, project_id: int):
    membership = page_membership(request, project_id)
    return render(request, "tickets/board.html", {
        "project": membership.project,
        "role": membership.role,
        "statuses": project_selectors.project_statuses(project=membership.project).filter(hidden=False),
        "board": board_payload(membership=membership),
    })


@login_required
def board_data(request, project_id: int):
    """GET /api/v1/projects/{id}/board for the page's own session: what it reloads after missing frames."""
    return JsonResponse(board_payload(membership=page_membership(request, project_id)))
