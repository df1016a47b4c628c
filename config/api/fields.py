from django.core.validators import RegexValidator
from rest_framework import serializers

hex_color = RegexValidator(r"^#[0-9a-fA-F]{6}$", "must be a hex color like #1a2b3c")


class HexColorField(serializers.CharField):
    def __init__(self, **kwargs):
        super().__init__(max_length=7, validators=[hex_color], **kwargs)
