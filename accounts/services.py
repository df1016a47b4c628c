import hashlib
import re
import secrets
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from core.errors import RuleViolation, Unavailable

from . import lockout
from .consumers import (
    close_sockets_after_commit,
    move_expiry_after_commit,
    session_group,
    token_group,
    user_session_sockets_group,
    user_sockets_group,
)
from .hashers import PasswordChecksBusy
from .models import ApiToken, User

# last_used_at is written at most this often per token, so reads do not all become writes.
LAST_USED_RESOLUTION = timedelta(minutes=1)
# How a token travels: `Authorization: Bearer <64 hex>`.
BEARER = re.compile(r"Bearer ([0-9a-f]{64})")


def token_digest(plain: str) -> str:
    return hashlib.sha256(plain.encode("ascii")).hexdigest()


@transaction.atomic
def issue_token(*, user: User, label: str = "API token", expires_at: datetime | None = None) -> tuple[ApiToken, str]:
    """Create a token and return it with its plain value, which is never stored nor shown again.

    A user holds at most MAX_TOKENS_PER_USER live (neither revoked nor expired) tokens: every way of
    minting one (profile page, admin, issuetoken) comes here, and is refused beyond.
    """
    # The user's row lock: of two concurrent issues, one waits and counts the other's token.
    User.objects.select_for_update().only("pk").get(pk=user.pk)
    if ApiToken.objects.live().filter(user=user).count() >= settings.MAX_TOKENS_PER_USER:
        raise RuleViolation(f"a user holds at most {settings.MAX_TOKENS_PER_USER} live tokens: revoke one first",
                            field="tokens")
    plain = secrets.token_hex(32)
    token = ApiToken.objects.create(
        user=user, label=label or "API token", digest=token_digest(plain), prefix=plain[:8], expires_at=expires_at
    )
    return token, plain


@transaction.atomic
def revoke_token(*, token: ApiToken) -> None:
    """Revoke the token and close the websockets opened with it, once committed."""
    if ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=timezone.now()):
        close_sockets_after_commit([token_group(token.pk)])


def end_session_sockets(*, session_key: str) -> None:
    """Close the websockets opened with a browser session that has just ended (a logout), once committed."""
    close_sockets_after_commit([session_group(session_key)])


def end_user_session_sockets(*, user: User) -> None:
    """Close the websockets opened with any browser session of the user, whose sessions a new password has just
    ended (a password reset), once committed; their token sockets stay."""
    close_sockets_after_commit([user_session_sockets_group(user.pk)])


@transaction.atomic
def delete_tokens(*, token_ids: list[int]) -> None:
    """Delete the tokens and close the websockets opened with them, once committed."""
    ApiToken.objects.filter(pk__in=token_ids).delete()
    close_sockets_after_commit([token_group(token_id) for token_id in token_ids])


@transaction.atomic
def set_token_expiry(*, token: ApiToken, expires_at: datetime | None) -> None:
    """Move the token's expiry; its open websockets close at the new moment (at once if it is past)."""
    ApiToken.objects.filter(pk=token.pk).update(expires_at=expires_at)
    token.expires_at = expires_at
    move_expiry_after_commit(token.pk, expires_at)


@transaction.atomic
def set_user_active(*, user: User, is_active: bool) -> None:
    """Activate or deactivate the user; deactivation closes every websocket they hold, once committed."""
    User.objects.filter(pk=user.pk).update(is_active=is_active)
    user.is_active = is_active
    if not is_active:
        close_sockets_after_commit([user_sockets_group(user.pk)])


def record_token_use(*, token: ApiToken) -> None:
    now = timezone.now()
    if token.last_used_at is not None and now - token.last_used_at < LAST_USED_RESOLUTION:
        return
    # Conditional update: of many concurrent requests with one token, one writes.
    stale = Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - LAST_USED_RESOLUTION)
    ApiToken.objects.filter(stale, pk=token.pk).update(last_used_at=now)
    token.last_used_at = now


@transaction.atomic
def create_user(
    *, username: str, name: str = "", email: str = "", password: str | None = None,
    is_staff: bool = False, is_superuser: bool = False,
) -> User:
    user = User(username=username, name=name, email=email, is_staff=is_staff or is_superuser,
                is_superuser=is_superuser)
    if password:
        user.set_password(password)
    else:
        user.set_unusable_password()
    user.full_clean(exclude=["password"])
    user.save()
    return user


def update_profile(
    *, user: User, name: str | None = None, email: str | None = None, email_notifications: str | None = None,
    current_password: str | None = None, address: str = "",
) -> User:
    """The user's own changes to their name, e-mail address and e-mail notifications (the API's /me/update, the
    profile page, an unsubscribe link); what is None stays. A new address needs the current password, checked
    as a login's is from `address` (the client's, for the lockout): whoever holds only a token or an open
    session cannot send the account's mail, password resets included, elsewhere."""
    changes = {"name": name, "email_notifications": email_notifications}
    if email is not None:
        email = User.objects.normalize_email(email)
        if email != user.email:
            confirm_password(user=user, password=current_password, address=address)
            changes["email"] = email
    changes = {field: value for field, value in changes.items() if value is not None}
    if changes:
        User.objects.filter(pk=user.pk).update(**changes)
        for field, value in changes.items():
            setattr(user, field, value)
    return user


def confirm_password(*, user: User, password: str | None, address: str) -> None:
    """Refuse (422 naming current_password) a missing or wrong password. Wrong ones count as failed logins of
    the user from that address (accounts/lockout.py), so a stolen token cannot guess it faster than the login
    page could; while locked out, the password is not checked."""
    if not password:
        raise RuleViolation("current_password is required to change email", field="current_password")
    if lockout.is_locked(user.username, address):
        raise RuleViolation(f"current_password: too many wrong attempts; try again in {lockout.lockout_minutes()} "
                            "minutes", field="current_password")
    try:
        right = user.check_password(password)
    except PasswordChecksBusy:
        raise Unavailable("too many passwords are being checked right now; try again") from None
    if not right:
        lockout.record_failure(user.username, address)
        raise RuleViolation("current_password is wrong", field="current_password")
    lockout.clear(user.username, address)
