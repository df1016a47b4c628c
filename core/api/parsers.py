from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

# No body of this API nests deeper than a few levels; past this a body is an attack on the recursion
# of whatever walks it next (the parser itself recurses, and fails near 1,000 levels).
MAX_JSON_DEPTH = 32


class JSONObjectParser(JSONParser):
    """Every JSON body of this API is an object; anything else is a malformed request (400)."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(f"JSON nested more than {MAX_JSON_DEPTH} levels deep") from None
        if not isinstance(data, dict):
            raise ParseError("JSON body must be an object")
        if depth(data) > MAX_JSON_DEPTH:
            raise ParseError(f"JSON nested more than {MAX_JSON_DEPTH} levels deep")
        return data


def depth(value) -> int:
    """How deeply containers nest in a parsed JSON value, counted without recursion."""
    deepest, level = 0, [(value, 1)]
    while level:
        item, at = level.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, at)
            level.extend((child, at + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest
