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


class PresenceFilter(admin.SimpleListFilter):
    """Yes/no on whether a timestamp field is set (archived_at, deleted_at)."""

    field: str

    def lookups(self, request, model_admin):
        return [("yes", "Yes"), ("no", "No")]

    def queryset(self, request, queryset):
        if self.value() in {"yes", "no"}:
            return queryset.filter(**{f"{self.field}__isnull": self.value() == "no"})
        return queryset
