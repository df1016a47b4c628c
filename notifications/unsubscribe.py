"""The unsubscribe link of notification e-mails (`List-Unsubscribe`, RFC 8058): `<SITE_URL>/unsubscribe/<token>/`,
where a POST turns the user's e-mail notifications off without a login.

The token is the user's id signed with SECRET_KEY, under a salt of its own (no other signed value of the site
passes for it) that also holds the user's e-mail address: a link only works for the address it was sent to, so
once the account's address has changed, whoever holds the old mailbox can no longer change the account's
preferences. It does not expire: a mail client may offer the link long after the e-mail came.
"""

from urllib.parse import urljoin

from django.conf import settings
from django.core import signing
from django.urls import reverse

from accounts.models import User

SALT = "notifications.unsubscribe"


class InvalidLink(Exception):
    """The token was not signed here for a user with their present address."""


def _signer(email: str) -> signing.Signer:
    return signing.Signer(salt=f"{SALT}:{email.casefold()}")


def unsubscribe_token(user: User) -> str:
    """`<user id>:<signature>`: URL-safe, and the same for a user until their address changes."""
    return _signer(user.email).sign(str(user.pk))


def unsubscribe_url(user: User) -> str:
    return urljoin(settings.SITE_URL, reverse("unsubscribe", args=[unsubscribe_token(user)]))


def user_of(token: str) -> User:
    """The user a token was made for, or InvalidLink (tampered, of another address, or of no user now)."""
    user_id, _, _ = token.partition(":")
    user = User.objects.filter(pk=int(user_id)).first() if user_id.isdigit() else None
    if user is None:
        raise InvalidLink()
    try:
        _signer(user.email).unsign(token)
    except signing.BadSignature:
        raise InvalidLink() from None
    return user
