"""The web pages: the caller's projects and the live board, for a browser logged in with a session."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from projects import selectors as project_selectors

from .board import board_head, board_payload


@login_required
def project_list(request):
    memberships = project_selectors.memberships_of(user=request.user)
    return render(request, "tickets/project_list.html", {"memberships": memberships})


@login_required
def board(request, project_id: int):
    membership = project_selectors.membership_for(user=request.user, project_id=project_id)
    return render(request, "tickets/board.html", {
        "project": membership.project,
        "role": membership.role,
        "statuses": project_selectors.project_statuses(project=membership.project).filter(hidden=False),
        "board": board_payload(board_head(membership=membership)),
    })

