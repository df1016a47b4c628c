from django.core.validators import RegexValidator
from django.urls import register_converter
from rest_framework import serializers

hex_color = RegexValidator(r"^#[0-9a-fA-F]{6}$", "must be a hex color like #1a2b3c")


class HexColorField(serializers.CharField):
    """`#rrggbb`, stored and shown in lower case."""

    def __init__(self, **kwargs):
        super().__init__(max_length=7, validators=[hex_color], **kwargs)

    def to_internal_value(self, data):
        return super().to_internal_value(data).lower()

# Ids fit a signed 64-bit column; a larger number would overflow the database driver (a 500).
MAX_ID = 2**63 - 1


class ObjectIdField(serializers.IntegerField):
    """A database id in a request body: a positive integer the database can hold."""

    def __init__(self, **kwargs):
        super().__init__(min_value=1, max_value=MAX_ID, **kwargs)


class SlugRelatedField(serializers.SlugRelatedField):
    """A slug naming a row: refused before the lookup when PostgreSQL could not even compare it (NUL)."""

    def to_internal_value(self, data):
        if isinstance(data, str) and "\x00" in data:
            self.fail("invalid")
        return super().to_internal_value(data)


class ObjectIdConverter:
    """`<id:name>` in API paths: like `<int:...>`, but a number too large to be an id matches no route (404)."""

    regex = "[0-9]{1,18}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value) -> str:
        return str(value)


# Registered where the converter is defined, so every URL module that imports it (pages, API,
# websocket routes, which load before the root URLconf) can use `<id:...>`.
register_converter(ObjectIdConverter, "id")


class StrictBooleanField(serializers.BooleanField):
    """true or false, and only those: DRF's BooleanField would also take "yes", "0" or 1."""

    default_error_messages = {"invalid": "must be true or false"}

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid")
        return data
