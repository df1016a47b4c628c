"""The orjson renderer writes what DRF's JSONRenderer wrote, for every type our responses carry."""

import dataclasses
import uuid
from collections import OrderedDict
from datetime import date, datetime, time, timedelta
from datetime import timezone as dt_timezone
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from django.utils.translation import gettext_lazy
from rest_framework.renderers import JSONRenderer
from rest_framework.utils.serializer_helpers import ReturnDict, ReturnList

from core.api.renderers import ORJSONRenderer


@dataclasses.dataclass
class Point:
    x: int


def by_drf(data, media_type=None):
    return JSONRenderer().render(data, media_type)


def by_orjson(data, media_type=None):
    return ORJSONRenderer().render(data, media_type)


RICH = {
    "ints": [0, -1, 2**63 - 1, True, False, None],
    "floats": [0.1, 1.5, -2.25, 1234.5678],
    "text": "Zoë “quoted” \"escaped\" \\ </script> 🚀 \t\n\x01 \u2028 \u2029",
    "decimal": [Decimal("12.50"), Decimal("0.1"), Decimal("-3")],
    "datetimes": [datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt_timezone.utc),
                  datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=dt_timezone.utc),
                  datetime(2026, 7, 2, 3, 4, 5, tzinfo=ZoneInfo("Europe/Paris")),
                  datetime(2026, 1, 2, 3, 4, 5)],
    "date": date(2027, 4, 5), "time": time(13, 14, 15, 500), "timedelta": timedelta(minutes=90),
    "uuid": uuid.UUID("12345678-1234-5678-1234-567812345678"),
    "lazy": gettext_lazy("This field is required."),
    "nested": ReturnDict({"list": ReturnList([OrderedDict(a=1)], serializer=None)}, serializer=None),
    "tuple": (1, "two"), "set": {3}, "frozenset": frozenset({4}), "bytes": b"raw",
    1: "int key", "": "empty key",
}


@pytest.mark.parametrize("data", [RICH, [RICH, RICH], {}, [], "plain", 7, {"ticket": {"tags": []}}],
                         ids=["rich", "list", "empty dict", "empty list", "string", "int", "small"])
def test_same_bytes_as_drf(data):
    assert by_orjson(data) == by_drf(data)


def test_none_is_an_empty_body():
    assert by_orjson(None) == by_drf(None) == b""


def test_an_indent_asked_for_is_honoured_as_drf_does():
    assert by_orjson({"a": [1]}, "application/json; indent=4") == by_drf({"a": [1]}, "application/json; indent=4")


def test_integers_beyond_64_bits_fall_back_to_drf():
    assert by_orjson({"big": 2**70}) == by_drf({"big": 2**70}) == b'{"big":1180591620717411303424}'


@pytest.mark.parametrize("value", [object(), Point(1)], ids=["object", "dataclass"])
def test_what_drf_cannot_render_still_fails(value):
    with pytest.raises(TypeError):
        by_drf({"value": value})
    with pytest.raises(TypeError):
        by_orjson({"value": value})


def test_is_the_api_default(client_for, project, viewer):
    response = client_for(viewer).get(f"/api/v1/projects/{project.id}/tickets")
    assert response.accepted_renderer.__class__ is ORJSONRenderer
    assert response.content == by_drf(response.data)
