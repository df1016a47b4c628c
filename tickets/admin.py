import re

from django import forms
from django.contrib import admin, messages
from django.db.models import Q

from accounts.models import User
from core.admin import HistoryInline, PresenceFilter, ReadOnlyInline
from projects.admin import ProjectAdmin
from projects.models import Project, Status, Tag

from . import services
from .models import Activity, Attachment, ChecklistItem, Comment, Ticket

REF = re.compile(r"^\s*([A-Za-z0-9]+)-(\d+)\s*$")

# The fields of a ticket services.update_ticket writes.
UPDATABLE = ("title", "description", "type", "priority", "deadline", "story_points", "estimated_hours", "tags")


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

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("actor")


class ChecklistItemInline(ReadOnlyInline):
    model = ChecklistItem
    fields = ("text", "done", "sort_order")
    ordering = ("sort_order", "id")


class CommentInline(ReadOnlyInline):
    """A comment is edited or deleted by its author."""

    model = Comment
    fields = ("created_at", "author", "message", "deleted_at")
    ordering = ("created_at", "id")

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("author")


class AttachmentInline(ReadOnlyInline):
    """Files come and go through the API, which stores and removes them."""

    model = Attachment
    fields = ("original_name", "mime_type", "filesize", "uploaded_by", "comment", "created_at")

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("uploaded_by", "comment")


class TicketForm(forms.ModelForm):
    """A ticket's status, tags and assignees are its project's: the choices offered are those, and anything
    else sent is refused."""

    class Meta:
        model = Ticket
        fields = "__all__"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        project_id = self.instance.project_id
        if project_id is None:
            return  # a new ticket: its project is chosen first, then the rest checked in clean()
        for name, choices in self.project_choices(project_id).items():
            if name in self.fields:
                self.fields[name].queryset = choices

    @staticmethod
    def project_choices(project_id: int) -> dict:
        return {"status": Status.objects.filter(project_id=project_id).order_by("sort_order", "id"),
                "tags": Tag.objects.filter(project_id=project_id).order_by("sort_order", "id"),
                "assignees": User.objects.filter(memberships__project_id=project_id).order_by("username")}

    def clean(self):
        cleaned = super().clean()
        project = cleaned.get("project") or self.instance.project
        if project is None:
            return cleaned
        for name, choices in self.project_choices(project.pk).items():
            chosen = cleaned.get(name)
            chosen = [] if chosen is None else [chosen] if isinstance(chosen, Status) else list(chosen)
            allowed = set(choices.filter(pk__in=[item.pk for item in chosen]).values_list("pk", flat=True))
            foreign = [str(item) for item in chosen if item.pk not in allowed]
            if foreign:
                self.add_error(name, f"not of this ticket's project: {', '.join(foreign)}")
        return cleaned


@admin.register(Ticket)
class TicketAdmin(admin.ModelAdmin):
    list_display = ("ref", "title", "project", "status", "type", "priority", "archived_at", "deleted_at",
                    "updated_at")
    list_filter = ("project", "status__slug", "type", "priority", ArchivedFilter, DeletedFilter)
    search_fields = ("title",)
    list_select_related = ("project", "status")
    form = TicketForm
    raw_id_fields = ("created_by",)
    filter_horizontal = ("tags", "assignees")
    readonly_fields = ("number", "created_at", "updated_at", "done_at", "archived_at", "deleted_at")
    inlines = [ChecklistItemInline, CommentInline, AttachmentInline, ActivityInline]
    actions = ["restore"]

    def has_add_permission(self, request):
        # Tickets come in through the API and the board, which number them, place them and record their history.
        return False

    def get_readonly_fields(self, request, obj=None):
        # A ticket's number, status, tags and history belong to its project: it never moves to another. Its
        # place in the column is the board's (sort), and who created it is history.
        fixed = (*self.readonly_fields, "project", "sort_order", "created_by")
        if obj.archived_at is not None or obj.deleted_at is not None:
            return (*fixed, *UPDATABLE, "status", "assignees")  # as through the API: unarchived (restored) first
        return fixed

    def save_model(self, request, obj, form, change):
        """Written in save_related, with the tags and assignees."""

    def save_related(self, request, form, formsets, change):
        """A change goes through the services, as through the API: history, done_at, the board's frames and
        its seq (the board's ETag) follow. A new status puts the ticket at the end of that column."""
        ticket, data, changed = form.instance, form.cleaned_data, set(form.changed_data)
        updates = {name: data[name] for name in changed & set(UPDATABLE)}
        if updates:
            services.update_ticket(ticket=ticket, actor=request.user, **updates)
        if "assignees" in changed:
            old_ids = set(ticket.assignees.values_list("pk", flat=True))
            for user in data["assignees"]:
                if user.pk not in old_ids:
                    services.assign_user(ticket=ticket, user=user, actor=request.user)
            for user_id in old_ids - {user.pk for user in data["assignees"]}:
                services.unassign_user(ticket=ticket, user_id=user_id, actor=request.user)
        if "status" in changed:
            services.move_ticket(ticket=ticket, status=data["status"], actor=request.user)
        for formset in formsets:
            self.save_formset(request, form, formset, change)

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


class TagInline(admin.TabularInline):
    """A project's tags. One deleted here goes through delete_tag, as through the API: its tickets record it and
    their cards, the board and the event log hear of it; one edited here renews its tickets' ETags."""

    model = Tag
    extra = 0
    fields = ("sort_order", "name", "color")


class ProjectWithTagsAdmin(ProjectAdmin):
    """The project's admin (projects/admin.py) with its tags, whose writes are the tickets app's."""

    inlines = [*ProjectAdmin.inlines, TagInline]

    def save_formset(self, request, form, formset, change):
        if formset.model is not Tag:
            return super().save_formset(request, form, formset, change)
        formset.save(commit=False)
        for tag in formset.deleted_objects:
            services.delete_tag(tag=tag, actor=request.user)
        for tag in formset.new_objects:
            tag.save()
        for tag, _ in formset.changed_objects:
            tag.save()
            services.tag_edited(tag=tag)


admin.site.unregister(Project)
admin.site.register(Project, ProjectWithTagsAdmin)
