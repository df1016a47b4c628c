import hashlib
import re
import secrets
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from .models import ApiToken, User

# last_used_at is written at most this often per token, so reads do not all become writes.
LAST_USED_RESOLUTION = timedelta(minutes=1)
# How a token travels: `Authorization: Bearer <64 hex>`.
BEARER = re.compile(r"Bearer ([0-9a-f]{64})")


def token_digest(plain: str) -> str:
    return hashlib.sha256(plain.encode("ascii")).hexdigest()


def issue_token(*, user: User, label: str = "API token", expires_at: datetime | None = None) -> tuple[ApiToken, str]:
    """Create a token and return it with its plain value, which is never stored nor shown again."""
    plain = secrets.token_hex(32)
    token = ApiToken.objects.create(
        user=user, label=label or "API token", digest=token_digest(plain), prefix=plain[:8], expires_at=expires_at
    )
    return token, plain


def revoke_token(*, token: ApiToken) -> None:
    ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())


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
