from django.core.validators import RegexValidator
from rest_framework import serializers

hex_color = RegexValidator(r"^#[0-9a-fA-F]{6}$", "must be a hex color like #1a2b3c")


class HexColorField(serializers.CharField):
    def __init__(self, **kwargs):
        super().__init__(max_length=7, validators=[hex_color], **kwargs)

# Ids fit a signed 64-bit column; a larger number would overflow the database driver (a 500).
MAX_ID = 2**63 - 1


class ObjectIdField(serializers.IntegerField):
    """A database id in a request body: a positive integer the database can hold."""

    def __init__(self, **kwargs):
        super().__init__(min_value=1, max_value=MAX_ID, **kwargs)


class ObjectIdConverter:
    """`<id:name>` in API paths: like `<int:...>`, but a number too large to be an id matches no route (404)."""

    regex = "[0-9]{1,18}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value) -> str:
        return str(value)
