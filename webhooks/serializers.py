from rest_framework import serializers

from core.api.fields import StrictBooleanField
from core.events import Event

from .models import ALL_EVENTS, Delivery, DeliveryStatus, Webhook

# The kinds of event the project's log keeps: what a webhook may ask for (or "*" for all of them).
LOG_EVENTS = [event.value for event in Event if event not in (Event.RESYNC_REQUIRED, Event.NOTIFICATION_CREATED)]
URL_MAX_LENGTH = 2000

# ---- input ------------------------------------------------------------------------------


class EventKindsField(serializers.ListField):
    child = serializers.ChoiceField(choices=[ALL_EVENTS, *LOG_EVENTS],
                                    error_messages={"invalid_choice": "unknown event kind {input}"})

    def __init__(self, **kwargs):
        super().__init__(allow_empty=False, max_length=len(LOG_EVENTS), **kwargs)

    def to_internal_value(self, data):
        kinds = list(dict.fromkeys(super().to_internal_value(data)))
        if ALL_EVENTS in kinds and len(kinds) > 1:
            raise serializers.ValidationError('"*" stands for every event kind: send it alone')
        return kinds


class CreateWebhookInput(serializers.Serializer):
    url = serializers.CharField(max_length=URL_MAX_LENGTH, help_text="http:// or https://, of a public address")
    events = EventKindsField(default=[ALL_EVENTS], help_text='Event kinds of the log, or ["*"] (the default)')
    description = serializers.CharField(max_length=500, allow_blank=True, default="")


class UpdateWebhookInput(serializers.Serializer):
    """Every field optional: only what is sent changes."""

    url = serializers.CharField(max_length=URL_MAX_LENGTH, required=False)
    events = EventKindsField(required=False)
    description = serializers.CharField(max_length=500, allow_blank=True, required=False)
    active = StrictBooleanField(required=False)


class DeliveryListInput(serializers.Serializer):
    limit = serializers.IntegerField(required=False, default=50, min_value=1, max_value=100)


# ---- output -----------------------------------------------------------------------------


class WebhookOutput(serializers.ModelSerializer):
    project_id = serializers.IntegerField()
    events = serializers.ListField(child=serializers.CharField())
    disabled_reason = serializers.SerializerMethodField(help_text="Why it was switched off for failing, or null")

    class Meta:
        model = Webhook
        fields = ["id", "project_id", "url", "events", "description", "active", "created_at", "disabled_reason"]

    def get_disabled_reason(self, webhook: Webhook) -> str | None:
        return webhook.disabled_reason or None


class DeliveryOutput(serializers.ModelSerializer):
    webhook_id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=DeliveryStatus.choices)
    response_body = serializers.CharField(allow_null=True, help_text="The first 1,024 characters of the last answer")
    error = serializers.SerializerMethodField(help_text="Why the last attempt failed (no answer, or not a 2xx), "
                                                        "or null")

    class Meta:
        model = Delivery
        fields = ["id", "webhook_id", "message_id", "event", "seq", "status", "attempts", "response_status",
                  "response_body", "duration_ms", "created_at", "next_attempt_at", "delivered_at", "error"]

    def get_error(self, delivery: Delivery) -> str | None:
        return delivery.error or None
