from django.contrib import admin


class ReadOnlyInline(admin.TabularInline):
    """Rows shown beside their parent and never edited here: what changes them goes through the API (or records
    the past), which keeps their history and tells the board."""

    extra = 0
    can_delete = False

    def get_readonly_fields(self, request, obj=None):
        return self.fields

    def has_add_permission(self, request, obj=None):
        return False


class HistoryInline(ReadOnlyInline):
    """Rows that record the past (a ticket's activity, an article's versions), newest first."""

    ordering = ("-created_at", "-id")


class PresenceFilter(admin.SimpleListFilter):
    """Yes/no on whether a timestamp field is set (archived_at, deleted_at)."""

    field: str

    def lookups(self, request, model_admin):
        return [("yes", "Yes"), ("no", "No")]

    def queryset(self, request, queryset):
        if self.value() in {"yes", "no"}:
            return queryset.filter(**{f"{self.field}__isnull": self.value() == "no"})
        return queryset
