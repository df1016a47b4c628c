from rest_framework import serializers

from core.api.fields import HexColorField

from .models import EstimationMode, Membership, Project, Status, Tag


class CreateProjectInput(serializers.Serializer):
    name = serializers.CharField(min_length=2, max_length=200, trim_whitespace=True)
    prefix = serializers.RegexField(
        r"^[A-Za-z0-9]{1,10}$", required=False, help_text="Derived from the name when omitted",
        error_messages={"invalid": "must be 1 to 10 letters or digits"},
    )
    description = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)


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
        fields = ["slug", "label", "color", "icon", "category"]


class MemberOutput(serializers.ModelSerializer):
    id = serializers.IntegerField(source="user.id")
    name = serializers.CharField(source="user.display_name")
    avatar = serializers.CharField(source="user.avatar", allow_null=True)

    class Meta:
        model = Membership
        fields = ["id", "name", "avatar", "role"]


class CreateTagInput(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    color = HexColorField(required=False, default="#6c757d")


class TagOutput(serializers.ModelSerializer):
    class Meta:
        model = Tag
        fields = ["id", "name", "color", "sort_order"]
