"""JSON responses encoded by orjson: the bytes DRF's JSONRenderer writes, several times faster.

orjson encodes dicts, lists, strings and numbers in C; every other type (datetimes, dates, times,
Decimal, lazy strings, querysets, dataclasses...) goes to DRF's own encoder, so it comes out exactly
as before (a UTC datetime ends in `Z`, a Decimal is a number). Whatever orjson cannot or may not
render the way DRF does falls back to DRF: an indent asked for in the Accept header, integers
beyond 64 bits, settings that ask for ASCII-only or spaced-out JSON. One difference is left: a
NaN or infinite float becomes `null` where DRF's strict mode refused to render it.
"""

import orjson
from rest_framework.renderers import JSONRenderer
from rest_framework.utils.encoders import JSONEncoder

OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_NON_STR_KEYS
# DRF escapes these two so that the JSON is also valid JavaScript.
LINE_SEPARATOR, PARAGRAPH_SEPARATOR = "\u2028".encode(), "\u2029".encode()


class ORJSONRenderer(JSONRenderer):
    encoder = JSONEncoder()

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if data is None:
            return b""
        if (self.ensure_ascii or not self.compact
                or self.get_indent(accepted_media_type, renderer_context or {}) is not None):
            return super().render(data, accepted_media_type, renderer_context)
        try:
            body = orjson.dumps(data, default=self.encoder.default, option=OPTIONS)
        except orjson.JSONEncodeError:
            # DRF then renders it, or raises the error it always raised.
            return super().render(data, accepted_media_type, renderer_context)
        if LINE_SEPARATOR in body or PARAGRAPH_SEPARATOR in body:
            body = body.replace(LINE_SEPARATOR, b"\\u2028").replace(PARAGRAPH_SEPARATOR, b"\\u2029")
        return body
