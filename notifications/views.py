from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from core.api.base import ApiViewSet
from core.api.inputs import validated
from core.api.schema import envelope, error_responses

from . import selectors, services
from .serializers import MarkReadForTicketInput, NotificationListFilterInput, NotificationOutput

UNREAD_COUNT = serializers.IntegerField(help_text="Unread notifications of projects the caller is a member of")
MARKED = envelope("NotificationsMarkedRead", success=True, unread_count=UNREAD_COUNT)


class NotificationViewSet(ApiViewSet):
    """The caller's own notifications: those of projects they are still a member of."""

    query_parameters = {"list": NotificationListFilterInput}

    @extend_schema(parameters=[NotificationListFilterInput],
                   responses={200: envelope("NotificationList", notifications=NotificationOutput(many=True)),
                              **error_responses(401)})
    def list(self, request):
        """List your 20 most recent notifications."""
        unread_only = validated(NotificationListFilterInput, request.query_params)["filter"] == "unread"
        notifications = selectors.recent_notifications(user=request.user, unread_only=unread_only)
        return Response({"notifications": NotificationOutput(notifications, many=True).data})

    @extend_schema(responses={200: envelope("NotificationUnreadCount", count=UNREAD_COUNT), **error_responses(401)})
    def unread_count(self, request):
        """Count your unread notifications."""
        return Response({"count": selectors.unread_count(user=request.user)})

    @extend_schema(request=MarkReadForTicketInput, responses={200: MARKED, **error_responses(401, 404, 422)})
    def mark_read_for_ticket(self, request):
        """Mark your notifications about a ticket read."""
        ticket_id = validated(MarkReadForTicketInput, request.data)["ticket_id"]
        project_id = selectors.project_of_visible_ticket(user=request.user, ticket_id=ticket_id)
        services.mark_read_for_ticket(user=request.user, project_id=project_id, ticket_id=ticket_id)
        return Response({"success": True, "unread_count": selectors.unread_count(user=request.user)})

    @extend_schema(request=None, responses={200: MARKED, **error_responses(401)})
    def mark_all_read(self, request):
        """Mark all your notifications read."""
        services.mark_all_read(user=request.user)
        return Response({"success": True, "unread_count": selectors.unread_count(user=request.user)})
