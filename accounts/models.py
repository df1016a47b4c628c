from django.contrib.auth.models import AbstractUser
from django.db import models
from django.db.models import Value
from django.db.models.functions import Coalesce, NullIf
from django.utils import timezone


def display_name(name: str, username: str) -> str:
    """What the interface shows for a user: the name, or the username when there is none."""
    return name or username


def shown_name(name: str, username: str) -> Coalesce:
    """display_name() written by the database, from the fields (or paths) of the name and username."""
    return Coalesce(NullIf(name, Value("")), username)


class EmailNotifications(models.TextChoices):
    """How a user hears of their notifications by e-mail (decisions.md, "E-mail")."""

    INSTANT = "instant"
    DIGEST = "digest"
    OFF = "off"


class User(AbstractUser):
    name = models.CharField(max_length=150, blank=True)
    avatar_url = models.URLField(max_length=500, blank=True)
    email_notifications = models.CharField(max_length=10, choices=EmailNotifications,
                                           default=EmailNotifications.INSTANT)

    @property
    def display_name(self) -> str:
        return display_name(self.name, self.username)

    @property
    def avatar(self) -> str | None:
        return self.avatar_url or None


class ApiTokenQuerySet(models.QuerySet):
    def live(self):
        """Neither revoked nor expired."""
        return self.filter(revoked_at__isnull=True).filter(
            models.Q(expires_at__isnull=True) | models.Q(expires_at__gt=timezone.now())
        )

    def usable(self):
        return self.live().filter(user__is_active=True)


class ApiToken(models.Model):
    """A personal API token. Only the SHA-256 digest of the secret is kept."""

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="api_tokens")
    label = models.CharField(max_length=100)
    digest = models.CharField(max_length=64, unique=True, editable=False)
    prefix = models.CharField(max_length=8, editable=False, help_text="First characters, to recognise it")
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.label} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > timezone.now())

    @property
    def is_usable(self) -> bool:
        """What ApiTokenQuerySet.usable() selects, for a token read with its user."""
        return self.is_active and self.user.is_active
