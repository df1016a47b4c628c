"""Webhooks and their deliveries, readable by staff; a delivery can be sent again from here.

Nothing is edited in the admin: endpoints are managed through the API, whose services keep the
project's flag and the secrets right.
"""

from django.contrib import admin, messages
from django.utils.translation import ngettext

from core.errors import RuleViolation

from . import services
from .models import Delivery, Webhook


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Webhook)
class WebhookAdmin(ReadOnlyAdmin):
    list_display = ("url", "project", "active", "events", "failing_since", "created_at")
    list_filter = ("active",)
    search_fields = ("url", "description", "project__name")
    list_select_related = ("project",)
    fields = ("project", "url", "events", "description", "active", "disabled_reason", "failing_since",
              "previous_secret_expires_at", "created_by", "created_at")


@admin.register(Delivery)
class DeliveryAdmin(ReadOnlyAdmin):
    list_display = ("message_id", "webhook", "event", "seq", "status", "attempts", "response_status", "error",
                    "created_at", "next_attempt_at")
    list_filter = ("status", "event")
    search_fields = ("message_id", "webhook__url")
    list_select_related = ("webhook",)
    fields = ("webhook", "message_id", "event", "seq", "status", "attempts", "response_status", "response_body",
              "error", "duration_ms", "created_at", "next_attempt_at", "delivered_at", "payload")
    actions = ["redeliver"]

    @admin.action(description="Redeliver the selected messages")
    def redeliver(self, request, queryset):
        sent = 0
        for delivery in queryset.select_related("webhook"):
            try:
                services.redeliver(delivery=delivery)
                sent += 1
            except RuleViolation as refused:
                self.message_user(request, f"{delivery.message_id}: {refused.message}", messages.WARNING)
        if sent:
            self.message_user(request, ngettext("%d message queued again.", "%d messages queued again.", sent) % sent)
