from datetime import datetime, time, timezone
from functools import wraps

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import PasswordResetConfirmView, redirect_to_login
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from core.cache import CountersUnavailable
from core.errors import RuleViolation, Unavailable
from core.ratelimit import client_bucket

from . import services
from .forms import GenerateTokenForm, ProfileForm
from .models import ApiToken


def home(request):
    """`/`: the caller's projects, or the login page that leads there."""
    projects = reverse("project-list-page")
    return redirect(projects) if request.user.is_authenticated else redirect_to_login(projects)


@never_cache  # the answer to a POST shows a new token's secret: no cache, proxy or back button keeps it
@login_required
def api_access(request):
    """List the caller's tokens; a POST generates one and shows its secret this once."""
    issued = None
    form = GenerateTokenForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        expires_on = form.cleaned_data["expires_at"]
        try:
            _, issued = services.issue_token(
                user=request.user,
                label=form.cleaned_data["label"],
                expires_at=datetime.combine(expires_on, time.max, tzinfo=timezone.utc) if expires_on else None,
            )
        except RuleViolation as refused:  # too many live tokens
            form.add_error(None, refused.message)
        else:
            form = GenerateTokenForm()
    tokens = ApiToken.objects.filter(user=request.user)
    return render(request, "accounts/api_access.html", {"form": form, "tokens": tokens, "issued": issued})


@never_cache
@login_required
def profile(request):
    """The caller's name, e-mail address and e-mail notifications, changed by the same rules as /api/v1/me/update."""
    form = ProfileForm(request.POST or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        try:
            services.update_profile(user=request.user, address=client_bucket(request), **form.changes())
        except RuleViolation as refused:  # the current password missing, wrong, or locked out
            form.add_error(refused.field, refused.message.replace("current_password", "The current password", 1))
        except (Unavailable, CountersUnavailable):  # the password could not be checked now
            form.add_error(None, "Your password could not be checked right now; try again in a moment.")
        else:
            messages.success(request, "Your profile is saved.")
            return redirect("profile")
    return render(request, "accounts/profile.html", {"form": form})


@login_required
@require_POST
def revoke_api_token(request, token_id: int):
    token = get_object_or_404(ApiToken, pk=token_id, user=request.user)  # only one's own tokens
    services.revoke_token(token=token)
    return redirect("api-access")


def closing_session_sockets(view):
    """A logout view that also closes the websockets opened with the session it ends, as a revoked token's
    are closed."""

    @wraps(view)
    def logout(request, *args, **kwargs):
        ended = request.session.session_key
        response = view(request, *args, **kwargs)
        if ended is not None and request.session.session_key != ended:  # logged out: the session was flushed
            services.end_session_sockets(session_key=ended)
        return response

    return logout


class ResetPasswordConfirmView(PasswordResetConfirmView):
    """Django's: the new password ends every session of the user (their session hash changes); their browsers'
    sockets are closed at once, as a logout closes its session's."""

    def form_valid(self, form):
        response = super().form_valid(form)
        services.end_user_session_sockets(user=form.user)
        return response
