"""Property tests: whatever JSON body or query string a client sends, every input serializer answers with
success or a validation error (a 422), never another exception (a 500).

The serializers are found, not listed: every class whose name ends in `Input` in the `serializers`
module of one of this project's apps, so the apps added later are covered as they arrive.
"""

import importlib
import inspect
from datetime import timedelta

import pytest
from django.apps import apps
from django.conf import settings
from django.http import QueryDict
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from rest_framework import serializers

from core.api.exceptions import first_error

PROPERTY_SETTINGS = hypothesis_settings(
    max_examples=40, deadline=timedelta(seconds=2), database=None, derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def input_serializers() -> list[type[serializers.Serializer]]:
    found = []
    for app in apps.get_app_configs():
        if not app.path.startswith(str(settings.BASE_DIR)):
            continue
        try:
            module = importlib.import_module(f"{app.name}.serializers")
        except ModuleNotFoundError:
            continue
        found += [cls for name, cls in inspect.getmembers(module, inspect.isclass)
                  if name.endswith("Input") and cls.__module__ == module.__name__
                  and issubclass(cls, serializers.Serializer)]
    return found


INPUTS = input_serializers()

# Strings that once reached the database and failed there, next to arbitrary text.
TRICKY_TEXT = st.sampled_from(["\x00", "back\x00log", "9" * 25, "-1", "", " ", "backlog", "2026-02-30", "1e999"])
TEXT = TRICKY_TEXT | st.text(max_size=20)
SCALARS = (st.none() | st.booleans() | st.integers() | st.integers(min_value=-(2**70), max_value=2**70)
           | st.floats(allow_nan=False, allow_infinity=False) | TEXT)
JSON_VALUES = st.recursive(SCALARS, lambda children: st.lists(children, max_size=4)
                           | st.dictionaries(TEXT, children, max_size=4), max_leaves=12)


def body_for(serializer_class) -> st.SearchStrategy[dict]:
    """Objects that mostly use the serializer's own field names, with stray keys now and then."""
    names = list(serializer_class().fields)
    known = st.fixed_dictionaries({}, optional={name: JSON_VALUES for name in names})
    return st.builds(lambda fields, extra: {**extra, **fields}, known, st.dictionaries(TEXT, JSON_VALUES, max_size=2))


def query_for(serializer_class) -> st.SearchStrategy[QueryDict]:
    names = list(serializer_class().fields)
    pairs = st.lists(st.tuples(st.sampled_from(names) | TEXT, TEXT), max_size=6)

    def build(items):
        query = QueryDict(mutable=True)
        for key, value in items:
            query.appendlist(key, value)
        return query

    return st.builds(build, pairs)


def check(serializer_class, data, context) -> None:
    serializer = serializer_class(data=data, context=context)
    if not serializer.is_valid():  # raises only what is not a ValidationError
        message, _ = first_error(serializer.errors)  # the 422 body is built from this
        assert message


@pytest.fixture
def context(project, manager):
    return {"project": project, "user": manager}


def test_every_app_with_inputs_is_found():
    assert {cls.__name__ for cls in INPUTS} >= {"CreateTicketInput", "MoveTicketInput", "CreateProjectInput"}


@pytest.mark.parametrize("data_for", [body_for, query_for], ids=["json body", "query string"])
@pytest.mark.parametrize("serializer_class", INPUTS, ids=lambda cls: f"{cls.__module__}.{cls.__name__}")
def test_any_input_is_accepted_or_refused_with_a_validation_error(serializer_class, data_for, context):
    @PROPERTY_SETTINGS
    @given(data=data_for(serializer_class))
    def property_holds(data):
        check(serializer_class, data, context)

    property_holds()
