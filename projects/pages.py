"""The project's settings page, for a browser logged in with a session: its managers only, by the API's own role
table (the page calls the same routes); and the page an invitation's link opens."""

from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache

from accounts.forms import LoginForm
from core.errors import RuleViolation
from transfers.models import Source
from webhooks.serializers import LOG_EVENTS

from . import selectors, services
from .forms import InvitedAccountForm
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


def signs_in(request) -> bool:
    """A POST of the invitation's page that checks or sets a password: counted as a login is (accounts.lockout)."""
    return request.POST.get("action") in {"login", "new-account"}


@never_cache
def invitation(request, token: str):
    """`/invitations/<token>/`: whoever holds the link joins the project with the invited role, once. A logged-in
    user confirms; someone else logs in here, or picks a username and password for a new account with the invited
    address. A link that names no invitation, or one accepted, revoked or expired, gets a page saying so."""
    found = selectors.invitation_by_token(token=token)
    if found is None:
        return _closed(request, "unknown")
    if found.closed_because is not None:
        return _closed(request, found.closed_because)
    action = request.POST.get("action") if request.method == "POST" else None
    login_form = LoginForm(request, data=request.POST if action == "login" else None)
    account_form = InvitedAccountForm(request.POST if action == "new-account" else None, email=found.email,
                                      auto_id="new_%s")
    try:
        if action == "join" and request.user.is_authenticated:
            return _joined(request, services.accept_invitation(invitation=found, user=request.user).project_id)
        if action == "login" and login_form.is_valid():
            user = login_form.get_user()
            membership = services.accept_invitation(invitation=found, user=user)
            login(request, user)
            return _joined(request, membership.project_id)
        if action == "new-account" and account_form.is_valid():
            user = services.join_with_new_account(invitation=found, username=account_form.cleaned_data["username"],
                                                  password=account_form.cleaned_data["password1"])
            login(request, user)
            return _joined(request, found.project_id)
    except RuleViolation:  # used, revoked or expired since the page was shown
        found.refresh_from_db()
        return _closed(request, found.closed_because or "unknown")
    return render(request, "projects/invitation.html", {
        "invitation": found, "login_form": login_form, "account_form": account_form, "action": action})


def _joined(request, project_id: int):
    return redirect("board-page", project_id)


# The status of each closed link's page: one that never was is not found, the others are gone for good.
CLOSED_STATUS = {"unknown": 404, "accepted": 410, "revoked": 410, "expired": 410}


def _closed(request, reason: str):
    return render(request, "projects/invitation_closed.html", {"reason": reason}, status=CLOSED_STATUS[reason])
