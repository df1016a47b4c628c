from django.contrib import admin

from tickets.admin import ticket_ref_filter

from .models import TimeEntry


@admin.register(TimeEntry)
class TimeEntryAdmin(admin.ModelAdmin):
    """Entries are made through the API, whose services keep the one-running-timer rule and the ticket's
    history; here staff look them up and may correct a note."""

    list_display = ("id", "ticket_ref", "user", "minutes", "state", "note", "started_at", "stopped_at", "created_at")
    list_filter = ("project", "user", "is_running")
    list_select_related = ("ticket__project", "user")
    search_fields = ("note",)
    readonly_fields = ("ticket", "user", "project", "seconds", "is_running", "started_at", "stopped_at",
                       "created_at", "updated_at")
    ordering = ("-created_at", "-id")

    def has_add_permission(self, request):
        return False

    @admin.display(description="ticket", ordering="ticket__number")
    def ticket_ref(self, entry: TimeEntry) -> str:
        return entry.ticket.prefix_ref

    @admin.display(description="minutes", ordering="seconds")
    def minutes(self, entry: TimeEntry) -> int:
        return entry.minutes

    @admin.display(description="state", ordering="is_running")
    def state(self, entry: TimeEntry) -> str:
        return entry.get_is_running_display()

    def get_search_results(self, request, queryset, search_term):
        """"APL-12" finds that ticket's entries; anything else searches notes."""
        by_ref = ticket_ref_filter(search_term, through="ticket__")
        if by_ref is not None:
            return queryset.filter(by_ref), False
        return super().get_search_results(request, queryset, search_term)
