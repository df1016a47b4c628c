"""The one table of the shared plumbing: the answers kept for Idempotency-Key retries (core/idempotency.py)."""

from django.conf import settings
from django.db import models


class IdempotencyKey(models.Model):
    """A caller's Idempotency-Key: claimed before its request's handler runs, then the answer that request got
    (`status` null while it is being served). Kept 24 hours; `pruneidempotencykeys` removes older rows."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64, help_text="SHA-256 of the request's method, path and body")
    created_at = models.DateTimeField(db_index=True)
    status = models.PositiveSmallIntegerField(null=True, blank=True)
    body = models.BinaryField(null=True, blank=True)
    headers = models.JSONField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "key"], name="core_idempotency_key_per_user")]

    def __str__(self) -> str:
        return f"{self.key} ({self.status or 'in flight'})"
