import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

ALL_EVENTS = "*"


class Webhook(models.Model):
    """An endpoint of a project that receives its events as signed POSTs."""

    project = models.ForeignKey("projects.Project", on_delete=models.CASCADE, related_name="webhooks")
    url = models.CharField(max_length=2000)
    events = models.JSONField(default=list)  # event kinds of the log, or ["*"]
    description = models.CharField(max_length=500, blank=True)
    active = models.BooleanField(default=True)
    disabled_reason = models.CharField(max_length=300, blank=True)
    # The signing secrets, sealed with a key derived from SECRET_KEY (webhooks/keys.py): a dump alone cannot sign.
    secret = models.TextField()
    previous_secret = models.TextField(blank=True)  # still signs until previous_secret_expires_at (rotation)
    previous_secret_expires_at = models.DateTimeField(null=True, blank=True)
    # The first failed attempt since the last delivered one: an endpoint failing for long is disabled.
    failing_since = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["project", "active"], name="webhook_project_active_idx")]

    def __str__(self) -> str:
        return self.url

    def wants(self, event: str) -> bool:
        return ALL_EVENTS in self.events or event in self.events


class DeliveryStatus(models.TextChoices):
    PENDING = "pending"
    DELIVERED = "delivered"
    RETRYING = "retrying"
    FAILED = "failed"


OPEN_STATUSES = (DeliveryStatus.PENDING, DeliveryStatus.RETRYING)


class Delivery(models.Model):
    """One message to one endpoint, from its first attempt through its retries (a row of the outbox).

    `dispatched_at`: when a sender was last handed the message's next attempt, renewed while it holds it waiting
    for its endpoint (null: not yet, the sweep will when it is due); `claimed_at`/`claim`: the sender sending it
    now. A hand-out or claim older than WEBHOOK_LOST_AFTER_SECONDS belonged to a process that died: the sweep
    hands the delivery out again. `original`: the first delivery of the message, on a redelivery; once any of them
    is delivered, the others are settled.
    """

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    message_id = models.CharField(max_length=40)  # webhook-id: the same on every retry and redelivery
    event = models.CharField(max_length=64)
    seq = models.PositiveBigIntegerField(null=True, blank=True)  # null for a ping
    payload = models.JSONField()  # the body: the event's frame as the log keeps it
    status = models.CharField(max_length=10, choices=DeliveryStatus, default=DeliveryStatus.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    response_body = models.TextField(null=True, blank=True)  # the first 1,024 characters of the last answer
    error = models.CharField(max_length=300, blank=True)  # why the last attempt failed, when it did
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    dispatched_at = models.DateTimeField(null=True, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    claim = models.UUIDField(null=True, blank=True)
    original = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        verbose_name_plural = "deliveries"
        indexes = [
            models.Index(fields=["webhook", "-id"], name="delivery_webhook_newest_idx"),
            # The sweep reads only the open deliveries, in the order they fall due.
            models.Index(fields=["next_attempt_at"], name="delivery_open_due_idx",
                         condition=Q(status__in=OPEN_STATUSES)),
            # The endpoint's attempts in flight (claimed, unfinished), counted at each claim.
            models.Index(fields=["webhook", "claimed_at"], name="delivery_in_flight_idx",
                         condition=Q(claimed_at__isnull=False)),
            # The sweep's pruning walks them oldest first (WEBHOOK_DELIVERY_RETENTION_DAYS).
            models.Index(fields=["created_at"], name="delivery_created_idx"),
            # The copies of a message, found when one of them is delivered.
            models.Index(fields=["original"], name="delivery_original_idx", condition=Q(original__isnull=False)),
        ]

    def __str__(self) -> str:
        return f"{self.message_id} {self.event} → {self.webhook_id} ({self.status})"

    @classmethod
    def due_now(cls, *, webhook: Webhook, payload: dict, now, message_id: str | None = None,
                original_id: int | None = None) -> "Delivery":
        """A delivery of `payload` (a frame) due now, to be handed to a sender at commit (hence dispatched_at)."""
        return cls(webhook=webhook, message_id=message_id or f"msg_{uuid.uuid4().hex}", event=payload["event"],
                   seq=payload.get("seq"), payload=payload, created_at=now, next_attempt_at=now, dispatched_at=now,
                   original_id=original_id)
