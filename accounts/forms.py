from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm, PasswordResetForm
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from core.mail import queue_email, site_url
from core.ratelimit import client_bucket

from . import lockout


class GenerateTokenForm(forms.Form):
    label = forms.CharField(max_length=100, help_text="What the token is for, e.g. “CI pipeline”.")
    expires_at = forms.DateField(
        required=False, label="Expires on", widget=forms.DateInput(attrs={"type": "date"}),
        help_text="Leave empty for a token that does not expire.",
    )

    def clean_expires_at(self):
        expires_on = self.cleaned_data["expires_at"]
        if expires_on and expires_on < timezone.now().date():
            raise forms.ValidationError("The expiry date is in the past.")
        return expires_on


class LockoutMixin:
    """For Django's authentication forms: refuses a locked-out username and address before the password
    is checked, and counts each failure (accounts/lockout.py)."""

    locked_out = False

    def clean(self):
        username = self.cleaned_data.get("username") or ""
        address = client_bucket(self.request) if self.request else ""
        if lockout.is_locked(username, address):
            self.locked_out = True
            raise forms.ValidationError(
                f"Too many failed login attempts. This login is locked for {lockout.lockout_minutes()} minutes; "
                "try again later.", code="locked")
        try:
            cleaned = super().clean()
        except forms.ValidationError:
            lockout.record_failure(username, address)
            raise
        if self.get_user() is not None:  # a form without a password is refused without raising here
            lockout.clear(username, address)
        return cleaned


class LoginForm(LockoutMixin, AuthenticationForm):
    pass


class AdminLoginForm(LockoutMixin, AdminAuthenticationForm):
    pass


class QueuedPasswordResetForm(PasswordResetForm):
    """Django's password reset, its e-mail queued (core.mail: off the request path, as every e-mail) with a link
    on SITE_URL; at most PASSWORD_RESET_EMAILS_PER_HOUR an address (accounts.lockout.reset_allowed)."""

    def save(self, **kwargs):
        if lockout.reset_allowed(self.cleaned_data["email"]):
            super().save(**kwargs)

    def send_mail(self, subject_template_name, email_template_name, context, from_email, to_email,
                  html_email_template_name=None):
        context = {**context, "link": site_url(reverse("password_reset_confirm",
                                                       args=[context["uid"], context["token"]]))}
        queue_email(kind="password_reset", to=to_email,
                    subject=render_to_string(subject_template_name, context),
                    text=render_to_string(email_template_name, context),
                    html=render_to_string(html_email_template_name, context))
