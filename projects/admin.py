from django.contrib import admin

from .models import Membership, Project, Status, Tag


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ("user",)


class StatusInline(admin.TabularInline):
    model = Status
    extra = 0
    fields = ("sort_order", "slug", "label", "category", "color", "icon", "hidden")


class TagInline(admin.TabularInline):
    model = Tag
    extra = 0
    fields = ("sort_order", "name", "color")


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ("name", "prefix", "owner", "estimation_mode", "docs_enabled", "created_at")
    list_filter = ("estimation_mode", "docs_enabled")
    search_fields = ("name", "prefix", "description", "owner__username")
    list_select_related = ("owner",)
    autocomplete_fields = ("owner",)
    readonly_fields = ("last_ticket_number", "created_at")
    inlines = [MembershipInline, StatusInline, TagInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ("project", "user", "role", "created_at")
    list_filter = ("role",)
    search_fields = ("project__name", "user__username", "user__name")
    list_select_related = ("project", "user")
    autocomplete_fields = ("project", "user")
