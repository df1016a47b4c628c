"""The project's settings page, for a browser logged in with a session: its managers only, by the API's own role
table (the page calls the same routes)."""

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import render

from transfers.models import Source
from webhooks.serializers import LOG_EVENTS

from . import selectors
from .models import EstimationMode
from .permissions import admits
from .roles import Role
from .views import ProjectViewSet

# What each source's file is, as its people know it (decisions.md, "Import and export").
IMPORT_SOURCES = {Source.TRACKER: "This tracker's export (zip)", Source.TRELLO: "Trello (board JSON)",
                  Source.JIRA: "Jira (CSV, all fields)", Source.GITHUB: "GitHub (issues JSON)"}


@login_required
def settings(request, project_id: int):
    membership = selectors.membership_for(user=request.user, project_id=project_id)  # others: 404
    if not admits(ProjectViewSet.required_roles["update"], membership):
        raise PermissionDenied("only the project's managers change its settings")
    project = membership.project
    return render(request, "projects/settings.html", {
        "project": project,
        "estimation_modes": [(mode.value, mode.label) for mode in EstimationMode],
        "roles": [(role.value, role.label) for role in Role],
        "event_kinds": LOG_EVENTS,
        "import_sources": [(source.value, IMPORT_SOURCES[source]) for source in Source],
        "settings": {"project_id": project.pk, "owner_id": project.owner_id, "user_id": request.user.pk},
    })
