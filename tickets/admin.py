import re

from django.contrib import admin, messages
from django.db.models import Q

from core.admin import HistoryInline, PresenceFilter

from . import services
from .models import Activity, Ticket

REF = re.compile(r"^\s*([A-Za-z0-9]+)-(\d+)\s*$")


def ticket_ref_filter(search_term: str, *, through: str = "") -> Q | None:
    """"APL-12" as a filter on the ticket reached through `through` ("ticket__" from a time entry, "" for
    tickets themselves); None when the term is not a ticket reference."""
    match = REF.match(search_term)
    if match is None:
        return None
    prefix, number = match.groups()
    return Q(**{f"{through}project__prefix__iexact": prefix, f"{through}number": int(number)})


class ArchivedFilter(PresenceFilter):
    title = parameter_name = "archived"
    field = "archived_at"


class DeletedFilter(PresenceFilter):
    title = parameter_name = "deleted"
    field = "deleted_at"


class ActivityInline(HistoryInline):
    model = Activity
    fields = ("created_at", "actor", "action", "changes")


@admin.register(Ticket)
class TicketAdmin(admin.ModelAdmin):
    list_display = ("ref", "title", "project", "status", "type", "priority", "archived_at", "deleted_at",
                    "updated_at")
    list_filter = ("project", "status__slug", "type", "priority", ArchivedFilter, DeletedFilter)
    search_fields = ("title",)
    list_select_related = ("project", "status")
    raw_id_fields = ("created_by",)
    filter_horizontal = ("tags", "assignees")
    readonly_fields = ("number", "created_at", "updated_at", "done_at", "archived_at", "deleted_at")
    inlines = [ActivityInline]
    actions = ["restore"]

    @admin.display(description="ref", ordering="number")
    def ref(self, ticket: Ticket) -> str:
        return ticket.prefix_ref

    def get_search_results(self, request, queryset, search_term):
        """"APL-12" finds that ticket; anything else searches titles."""
        by_ref = ticket_ref_filter(search_term)
        if by_ref is not None:
            return queryset.filter(by_ref), False
        return super().get_search_results(request, queryset, search_term)

    @admin.action(description="Restore selected deleted tickets")
    def restore(self, request, queryset):
        deleted = list(queryset.filter(deleted_at__isnull=False))
        for ticket in deleted:
            services.restore_ticket(ticket=ticket, actor=request.user)
        self.message_user(request, f"{len(deleted)} ticket(s) restored.", messages.SUCCESS)
