from django.contrib import admin


class HistoryInline(admin.TabularInline):
    """Rows that record the past (a ticket's activity, an article's versions): shown, never edited here."""

    extra = 0
    can_delete = False
    ordering = ("-created_at", "-id")

    def get_readonly_fields(self, request, obj=None):
        return self.fields

    def has_add_permission(self, request, obj=None):
        return False
