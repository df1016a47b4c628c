"""The tables of the shared plumbing: the answers kept for Idempotency-Key retries (core/idempotency.py) and the
e-mails waiting to be sent (core/mail.py)."""

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


class OutboundEmail(models.Model):
    """One e-mail, stored in the transaction of the write that caused it, sent by the background workers
    (core/mail.py): `pending` until an SMTP server accepts it (`sent`) or its last retry fails (`failed`)."""

    class Status(models.TextChoices):
        PENDING = "pending"
        SENT = "sent"
        FAILED = "failed"

    kind = models.CharField(max_length=40, help_text="notification, digest, invitation, password_reset, ...")
    to = models.CharField(max_length=254)
    subject = models.CharField(max_length=998)
    text = models.TextField()
    html = models.TextField(blank=True, default="")
    headers = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField()
    next_attempt_at = models.DateTimeField()
    # Set while one process sends it, so that no other sends it too; one left set past EMAIL_LOST_AFTER_SECONDS
    # belonged to a process that died.
    claimed_at = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True, default="")

    class Meta:
        indexes = [models.Index(fields=["next_attempt_at"], condition=models.Q(status="pending"),
                                name="core_outboundemail_due"),
                   # A recipient's e-mails of a kind this hour (notifications/emails.py: the hourly cap).
                   models.Index(fields=["to", "kind", "created_at"], name="core_outboundemail_recipient")]

    def __str__(self) -> str:
        return f"{self.kind} to {self.to} ({self.status})"
