from django.contrib import admin

from core.admin import PresenceFilter

from .models import Notification


class ReadFilter(PresenceFilter):
    title = parameter_name = "read"
    field = "read_at"


@admin.register(Notification)
class NotificationAdmin(admin.ModelAdmin):
    list_display = ("created_at", "user", "type", "message", "project", "read_at")
    list_filter = (ReadFilter, "type")
    search_fields = ("user__username", "user__name", "user__email", "=type")
    list_select_related = ("user", "project")
    raw_id_fields = ("user", "actor", "ticket")
    readonly_fields = ("created_at",)
    ordering = ("-created_at", "-id")
