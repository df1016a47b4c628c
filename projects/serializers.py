from rest_framework import serializers

from core.api.fields import HexColorField, StrictBooleanField
from tickets.serializers import UserRefOutput

from .models import EstimationMode, Invitation, Membership, Project, Status, StatusCategory, Tag
from .roles import Role

PREFIX = r"^[A-Za-z0-9]{1,10}$"
PREFIX_ERRORS = {"invalid": "must be 1 to 10 letters or digits"}


class CreateProjectInput(serializers.Serializer):
    name = serializers.CharField(min_length=2, max_length=200, trim_whitespace=True)
    prefix = serializers.RegexField(PREFIX, required=False, help_text="Derived from the name when omitted",
                                    error_messages=PREFIX_ERRORS)
    description = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)


class UpdateProjectInput(serializers.Serializer):
    """Send only what changes."""

    name = serializers.CharField(required=False, min_length=2, max_length=200, trim_whitespace=True)
    prefix = serializers.RegexField(PREFIX, required=False, help_text="Stored upper-case",
                                    error_messages=PREFIX_ERRORS)
    description = serializers.CharField(required=False, allow_blank=True, max_length=2000)
    docs_enabled = StrictBooleanField(required=False)
    estimation_mode = serializers.ChoiceField(required=False, choices=EstimationMode.choices)


class ProjectOutput(serializers.ModelSerializer):
    class Meta:
        model = Project
        fields = ["id", "name", "prefix", "description"]


class MembershipProjectOutput(serializers.ModelSerializer):
    """A project as its member sees it in the list: with the caller's role."""

    id = serializers.IntegerField(source="project.id")
    name = serializers.CharField(source="project.name")
    prefix = serializers.CharField(source="project.prefix")
    description = serializers.CharField(source="project.description")
    docs_enabled = serializers.BooleanField(source="project.docs_enabled")
    estimation_mode = serializers.ChoiceField(source="project.estimation_mode",
                                              choices=EstimationMode.choices)

    class Meta:
        model = Membership
        fields = ["id", "name", "prefix", "description", "role", "docs_enabled", "estimation_mode"]


class StatusOutput(serializers.ModelSerializer):
    class Meta:
        model = Status
        fields = ["slug", "label", "color", "icon", "category", "hidden"]


STATUS_SLUG = r"^[a-z0-9_]{1,50}$"


class CreateStatusInput(serializers.Serializer):
    label = serializers.CharField(max_length=100)
    slug = serializers.RegexField(STATUS_SLUG, required=False,
                                  help_text="Derived from the label when omitted (unique in the project)",
                                  error_messages={"invalid": "must be 1 to 50 lower-case letters, digits or _"})
    color = HexColorField(required=False, default="#6c757d")
    category = serializers.ChoiceField(choices=StatusCategory.choices, required=False, default=StatusCategory.TODO)
    hidden = StrictBooleanField(required=False, default=False)


class UpdateStatusInput(serializers.Serializer):
    """Send only what changes; the slug, which requests name the status by, never changes."""

    label = serializers.CharField(required=False, max_length=100)
    color = HexColorField(required=False)
    category = serializers.ChoiceField(choices=StatusCategory.choices, required=False)
    hidden = StrictBooleanField(required=False)


class SortStatusesInput(serializers.Serializer):
    slugs = serializers.ListField(child=serializers.CharField(max_length=50), max_length=500,
                                  help_text="Every status slug of the project, in the new order")


class MemberOutput(serializers.ModelSerializer):
    id = serializers.IntegerField(source="user.id")
    name = serializers.CharField(source="user.display_name")
    avatar = serializers.CharField(source="user.avatar", allow_null=True)

    class Meta:
        model = Membership
        fields = ["id", "name", "avatar", "role"]


class UpdateMemberInput(serializers.Serializer):
    role = serializers.ChoiceField(choices=Role.choices)


class InviteInput(serializers.Serializer):
    email = serializers.EmailField(max_length=254)
    role = serializers.ChoiceField(choices=Role.choices)


class InvitationOutput(serializers.ModelSerializer):
    invited_by = UserRefOutput()

    class Meta:
        model = Invitation
        fields = ["id", "email", "role", "invited_by", "created_at", "expires_at", "accepted_at"]


class CreateTagInput(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    color = HexColorField(required=False, default="#6c757d")


class TagOutput(serializers.ModelSerializer):
    class Meta:
        model = Tag
        fields = ["id", "name", "color", "sort_order"]


class UpdateTagInput(serializers.Serializer):
    """Send only what changes."""

    name = serializers.CharField(required=False, max_length=100)
    color = HexColorField(required=False)
