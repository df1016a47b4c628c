"""The web pages: the caller's projects and the live board, for a browser logged in with a session."""

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from core.markdown import render_markdown
from projects import selectors as project_selectors

from .board import board_head, board_payload
from .models import Ticket


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


@require_GET
@never_cache
@login_required
def ticket_description(request, project_id: int, number: int):
    """A ticket's description as the board's panel shows it: HTML from the docs pages' safe Markdown renderer,
    a fragment the page inserts as it is (the API carries the Markdown source; a browser has no renderer
    of ours). The same readers as the ticket's detail: members, archived tickets included."""
    membership = project_selectors.membership_for(user=request.user, project_id=project_id)
    ticket = get_object_or_404(Ticket.objects.live().only("description"), project=membership.project, number=number)
    return HttpResponse(render_markdown(ticket.description), content_type="text/html; charset=utf-8")
