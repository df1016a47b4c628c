from rest_framework import serializers

from core.api.fields import ObjectIdField
from core.time import timestamp

from .models import Notification, NotificationType


class NotificationListFilterInput(serializers.Serializer):
    filter = serializers.CharField(required=False, allow_blank=True, default="",
                                   help_text="`unread` lists only unread notifications; anything else, all")


class MarkReadForTicketInput(serializers.Serializer):
    ticket_id = ObjectIdField()


class NotificationOutput(serializers.Serializer):
    """The Notification shape; the declared fields document it (OpenAPI), to_representation builds it."""

    id = serializers.IntegerField()
    type = serializers.ChoiceField(choices=NotificationType.choices)
    message = serializers.CharField()
    ticket_id = serializers.IntegerField()
    project_id = serializers.IntegerField()
    read_at = serializers.CharField(allow_null=True, help_text="YYYY-MM-DD HH:MM:SS (UTC), null while unread")
    created_at = serializers.CharField(help_text="YYYY-MM-DD HH:MM:SS (UTC)")

    def to_representation(self, notification: Notification):
        return {
            "id": notification.id, "type": notification.type, "message": notification.message,
            "ticket_id": notification.ticket_id, "project_id": notification.project_id,
            "read_at": timestamp(notification.read_at), "created_at": timestamp(notification.created_at),
        }
