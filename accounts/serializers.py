from rest_framework import serializers

from .models import EmailNotifications, User


class UpdateMeInput(serializers.Serializer):
    """Send only what changes."""

    name = serializers.CharField(required=False, allow_blank=True, max_length=150,
                                 help_text="Empty: you are shown by your username")
    email = serializers.EmailField(required=False, max_length=254, help_text="A new address needs current_password")
    email_notifications = serializers.ChoiceField(
        required=False, choices=EmailNotifications.choices,
        help_text="`instant`: each notification e-mailed; `digest`: one e-mail a day; `off`: none")
    current_password = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False,
                                             max_length=4096, help_text="Your password, to change `email`")


class MeOutput(serializers.ModelSerializer):
    """The caller's own account. `name` is the name as stored, empty when none was given."""

    class Meta:
        model = User
        fields = ["id", "username", "name", "email", "email_notifications"]
