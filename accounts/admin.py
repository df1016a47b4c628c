from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.db import models
from django.template.response import TemplateResponse
from django.utils import timezone

from core.errors import RuleViolation

from . import services
from .models import ApiToken, User


@admin.register(User)
class UserAdmin(DjangoUserAdmin):
    fieldsets = DjangoUserAdmin.fieldsets + (("Profile", {"fields": ("name", "avatar_url")}),)
    list_display = ("username", "name", "email", "is_active", "is_staff", "date_joined")
    search_fields = ("username", "name", "email")
    actions = ["generate_api_token"]
    # An avatar address typed without a scheme is taken as https (Django 6's default; 5.2 warns about it).
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if change and "is_active" in form.changed_data:
            services.set_user_active(user=obj, is_active=obj.is_active)  # closes a deactivated user's sockets

    @admin.action(description="Generate an API token (shown once)")
    def generate_api_token(self, request, queryset):
        label = f"issued by {request.user.username} in the admin"
        issued = []
        for user in queryset:
            try:
                issued.append((user, services.issue_token(user=user, label=label)[1]))
            except RuleViolation as refused:  # too many live tokens
                self.message_user(request, f"No token for {user.username}: {refused.message}", messages.ERROR)
        if not issued:
            return None  # back to the user list, with the messages
        context = {**self.admin_site.each_context(request), "title": "API tokens issued", "issued": issued,
                   "opts": self.model._meta}
        return TemplateResponse(request, "admin/accounts/issued_tokens.html", context)


class TokenStateFilter(admin.SimpleListFilter):
    title = "state"
    parameter_name = "state"

    def lookups(self, request, model_admin):
        return [("active", "Active"), ("revoked", "Revoked"), ("expired", "Expired")]

    def queryset(self, request, queryset):
        now = timezone.now()
        if self.value() == "active":
            return queryset.usable()
        if self.value() == "revoked":
            return queryset.filter(revoked_at__isnull=False)
        if self.value() == "expired":
            return queryset.filter(revoked_at__isnull=True, expires_at__lte=now)
        return queryset


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Tokens are issued from the user list (action) and never shown again; the digest is never shown."""

    list_display = ("label", "user", "prefix", "created_at", "last_used_at", "expires_at", "revoked_at")
    list_filter = (TokenStateFilter,)
    search_fields = ("label", "prefix", "user__username", "user__name")
    list_select_related = ("user",)
    fields = ("user", "label", "prefix", "created_at", "last_used_at", "expires_at", "revoked_at")
    readonly_fields = ("user", "prefix", "created_at", "last_used_at", "revoked_at")
    actions = ["revoke"]

    def has_add_permission(self, request):
        return False

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if "expires_at" in form.changed_data:
            services.set_token_expiry(token=obj, expires_at=obj.expires_at)  # reschedules its sockets' close

    def delete_model(self, request, obj):
        services.delete_tokens(token_ids=[obj.pk])

    def delete_queryset(self, request, queryset):
        services.delete_tokens(token_ids=list(queryset.values_list("pk", flat=True)))

    @admin.action(description="Revoke selected tokens")
    def revoke(self, request, queryset):
        for token in queryset.filter(revoked_at__isnull=True):
            services.revoke_token(token=token)
        self.message_user(request, "Tokens revoked.", messages.SUCCESS)
