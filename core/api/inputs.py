from rest_framework.serializers import Serializer


def validated(serializer_class: type[Serializer], data, **context) -> dict:
    """The request body checked by an input serializer; a failure becomes a 422 in the handler."""
    serializer = serializer_class(data=data, context=context)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data
