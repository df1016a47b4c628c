from django.http import QueryDict
from rest_framework.exceptions import ErrorDetail, ValidationError
from rest_framework.fields import CharField, ListField
from rest_framework.serializers import Serializer


def validated(serializer_class: type[Serializer], data, **context) -> dict:
    """The request body checked by an input serializer; a failure becomes a 422 in the handler."""
    serializer = serializer_class(data=data, context=context)
    if not isinstance(data, QueryDict):  # a JSON body (a query string holds text only)
        errors = not_text(serializer.fields, data)
        if errors:
            raise ValidationError(errors)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def not_text(fields: dict, body: dict) -> dict:
    """Where a JSON body gives another type than a string for a text field, or an item of a list of text:
    DRF's CharField would read 0 as "0", and the reference declares a string. Worded as DRF words it."""
    errors = {}
    for name, field in fields.items():
        value = body.get(name)
        if field.read_only or value is None:
            continue
        if isinstance(field, CharField) and not isinstance(value, str):
            errors[name] = [ErrorDetail(field.error_messages["invalid"], code="invalid")]
        elif isinstance(field, ListField) and isinstance(field.child, CharField) and isinstance(value, list):
            items = {index: [ErrorDetail(field.child.error_messages["invalid"], code="invalid")]
                     for index, item in enumerate(value) if not isinstance(item, str)}
            if items:
                errors[name] = items
    return errors
