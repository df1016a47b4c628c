from django.contrib.auth.forms import UserCreationForm

from accounts.models import User


class InvitedAccountForm(UserCreationForm):
    """A username and a password (Django's validators, the invited address counted among what a password must
    not resemble) for someone invited who has no account yet."""

    class Meta(UserCreationForm.Meta):
        model = User

    def __init__(self, *args, email: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.instance.email = email
        self.fields["username"].widget.attrs.pop("autofocus", None)
