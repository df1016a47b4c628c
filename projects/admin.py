from django.contrib import admin

from . import services
from .models import Invitation, Membership, Project, Status


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ("user",)


class StatusInline(admin.TabularInline):
    model = Status
    extra = 0
    fields = ("sort_order", "slug", "label", "category", "color", "icon", "hidden")


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ("name", "prefix", "owner", "estimation_mode", "docs_enabled", "created_at")
    list_filter = ("estimation_mode", "docs_enabled")
    search_fields = ("name", "prefix", "description", "owner__username")
    list_select_related = ("owner",)
    autocomplete_fields = ("owner",)
    readonly_fields = ("last_ticket_number", "created_at")
    inlines = [MembershipInline, StatusInline]  # and the tags' (tickets/admin.py: their writes touch tickets)

    def get_inlines(self, request, obj):
        # A new project gets its owner's membership and the default columns from create_project, as through the
        # API; its members, columns and tags are edited once it exists.
        return self.inlines if obj is not None else []

    def save_model(self, request, obj, form, change):
        if change:
            return super().save_model(request, obj, form, change)
        project = services.create_project(owner=obj.owner, name=obj.name, prefix=obj.prefix,
                                          description=obj.description)
        services.update_project(project=project, docs_enabled=obj.docs_enabled, estimation_mode=obj.estimation_mode)
        # The admin goes on with the instance its form built (the message, the redirect): it becomes the one made.
        for field in Project._meta.concrete_fields:
            setattr(obj, field.attname, getattr(project, field.attname))

    def save_formset(self, request, form, formset, change):
        if formset.model is not Membership:
            return super().save_formset(request, form, formset, change)
        # Memberships deleted inline leave through the service, which closes the removed member's sockets.
        formset.save(commit=False)
        for membership in formset.deleted_objects:
            services.remove_member(project=membership.project, user=membership.user)
        for membership in formset.new_objects + [changed for changed, _ in formset.changed_objects]:
            membership.save()


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ("project", "user", "role", "created_at")
    list_filter = ("role",)
    search_fields = ("project__name", "user__username", "user__name")
    list_select_related = ("project", "user")
    autocomplete_fields = ("project", "user")

    def delete_model(self, request, obj):
        services.remove_member(project=obj.project, user=obj.user)

    def delete_queryset(self, request, queryset):
        for membership in queryset.select_related("project", "user"):
            services.remove_member(project=membership.project, user=membership.user)


@admin.register(Invitation)
class InvitationAdmin(admin.ModelAdmin):
    """Invitations are sent through the API, which e-mails their link (never shown again): here they are looked
    at, and revoked."""

    list_display = ("email", "project", "role", "invited_by", "created_at", "expires_at", "accepted_at", "revoked_at")
    list_filter = ("role",)
    search_fields = ("email", "project__name")
    list_select_related = ("project", "invited_by")
    actions = ["revoke"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    @admin.action(description="Revoke the selected pending invitations")
    def revoke(self, request, queryset):
        for invitation in queryset.filter(accepted_at__isnull=True):
            services.revoke_invitation(invitation=invitation)
