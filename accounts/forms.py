from django import forms
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm, PasswordResetForm
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from core.mail import queue_email, site_url
from core.ratelimit import client_bucket

from . import lockout
from .models import EmailNotifications, User


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


NOTIFICATION_CHOICES = [
    (EmailNotifications.INSTANT, "Each notification, as it happens"),
    (EmailNotifications.DIGEST, "One e-mail a day with what arrived"),
    (EmailNotifications.OFF, "None"),
]


class ProfileForm(forms.Form):
    """The profile page's fields; the rules (a new address needs the password) are the service's."""

    name = forms.CharField(max_length=150, required=False, help_text="Leave empty to be shown by your username.",
                           widget=forms.TextInput(attrs={"autocomplete": "name"}))
    email = forms.EmailField(max_length=254, label="E-mail address",
                             widget=forms.EmailInput(attrs={"autocomplete": "email"}))
    email_notifications = forms.ChoiceField(choices=NOTIFICATION_CHOICES, widget=forms.RadioSelect,
                                            label="E-mail notifications")
    current_password = forms.CharField(
        required=False, strip=False, help_text="Needed only to change your e-mail address.",
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}))

    def __init__(self, data=None, *, user: User):
        super().__init__(data, initial={"name": user.name, "email": user.email,
                                        "email_notifications": user.email_notifications})
        # An account made without an address (createuser) may keep none; one that has an address cannot clear it.
        self.fields["email"].required = bool(user.email)

    def changes(self) -> dict:
        """The cleaned fields as accounts.services.update_profile takes them: what is empty stays."""
        data = self.cleaned_data
        return {"name": data["name"], "email": data["email"] or None,
                "email_notifications": data["email_notifications"],
                "current_password": data["current_password"] or None}


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
