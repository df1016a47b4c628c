"""The API reference says what validation takes, for what a reference can say of one value: a text or a
day that a request's schema admits, its field accepts; one the schema refuses, the field refuses too
(but for two lenient readings: a length over the limit only before trimming, as the server trims first,
and a day in other digits than ASCII); and a value of another JSON type where the reference declares a
string is refused (DRF would read 0 as "0")."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from rest_framework import serializers
from rest_framework.exceptions import ValidationError

from core.api.inputs import validated
from core.api.schema import WHITESPACE
from tests.schema import schema
from tests.security.test_input_properties import INPUTS, PROPERTY_SETTINGS

# Python's whitespace, control characters, NUL, and ordinary text, in short strings. Not lone surrogates,
# which no UTF-8 text holds (RFC 8259, 8.2): DRF refuses their JSON escapes, a reference cannot spell them.
TEXT = st.text(alphabet=st.sampled_from([" ", "\t", "\n", "\x0b", "\x1c", "\x1f", "\x85", "\xa0", "\u2028",
                                         "\u3000", "\ufeff", "\x00", "\x01", "a", "Z", "0", "é", "-", "#"])
               | st.characters(exclude_categories=["Cs"]), max_size=6)
DAYS = (st.dates().map(str) | st.from_regex(r"\A\d{4}-[01]\d-[0-3]\d\Z")
        | st.from_regex(r"\A\d{1,4}-\d{1,2}-\d{1,2}\Z") | TEXT)


def request_fields() -> list[tuple[str, serializers.Field, dict]]:
    """Every text and day field of a request body, or an item of a list of them, with its schema."""
    components = schema()["components"]["schemas"]
    found = []
    for serializer_class in INPUTS:
        component = components.get(f"{serializer_class.__name__}Request")
        if component is None:
            continue  # read from the query string (the property tests cover those)
        for name, field in serializer_class().fields.items():
            field_schema = component["properties"].get(name)
            if isinstance(field, serializers.ListField):
                field, field_schema = field.child, (field_schema or {}).get("items")
            if field_schema is not None and type(field) in (serializers.CharField, serializers.DateField):
                found.append((f"{serializer_class.__name__}.{name}", field, field_schema))
    return found


FIELDS = request_fields()


def accepts(field: serializers.Field, value) -> bool:
    try:
        field.run_validation(value)
    except ValidationError:
        return False
    return True


def over_the_length_before_trimming_only(field, field_schema: dict, value: str) -> bool:
    without_length = {key: item for key, item in field_schema.items() if key != "maxLength"}
    return (Draft202012Validator(without_length).is_valid(value) and getattr(field, "trim_whitespace", False)
            and len(value.strip()) <= field_schema.get("maxLength", len(value)))


def lenient_day(field, value: str) -> bool:
    """A day in another script's digits: DRF reads them (strptime does), the reference asks for ASCII."""
    return isinstance(field, serializers.DateField) and not value.isascii()


def test_the_fields_are_found():
    names = {name for name, _, _ in FIELDS}
    assert {"CreateProjectInput.name", "CreateTicketInput.title", "CreateTicketInput.deadline",
            "CreateTicketInput.checklist", "ManualEntryInput.note", "CreateArticleInput.content"} <= names


@pytest.mark.parametrize(("name", "field", "field_schema"), FIELDS, ids=[name for name, _, _ in FIELDS])
@PROPERTY_SETTINGS
@given(data=st.data())
def test_the_schema_admits_what_the_field_accepts(name, field, field_schema, data):
    value = data.draw(DAYS if isinstance(field, serializers.DateField) else TEXT)
    admitted, accepted = Draft202012Validator(field_schema).is_valid(value), accepts(field, value)
    if admitted:
        assert accepted, f"{name}: the reference admits {value!r}, validation refuses it"
    elif not (over_the_length_before_trimming_only(field, field_schema, value) or lenient_day(field, value)):
        assert not accepted, f"{name}: the reference refuses {value!r}, validation accepts it"


def test_the_whitespace_of_the_patterns_is_what_python_trims():
    spaces = re.compile(f"[{WHITESPACE}]")
    assert [code for code in range(0x110000) if chr(code).isspace() != bool(spaces.match(chr(code)))] == []


@pytest.mark.parametrize("day", ["0000-01-01", "2025-02-29", "2100-02-29", "2025-13-01", "2025-04-31", "2025-1-05",
                                 " 2025-01-05", "2025-01-05\n"])
def test_days_a_calendar_lacks_are_refused_by_the_reference(day):
    deadline = schema()["components"]["schemas"]["CreateTicketInputRequest"]["properties"]["deadline"]
    assert not Draft202012Validator(deadline).is_valid(day)


def test_every_leap_day_is_admitted_and_only_those():
    import calendar

    deadline = schema()["components"]["schemas"]["CreateTicketInputRequest"]["properties"]["deadline"]
    pattern = re.compile(deadline["pattern"])
    assert [year for year in range(1, 10000) if bool(pattern.match(f"{year:04d}-02-29")) != calendar.isleap(year)
            ] == []


@pytest.mark.parametrize(("serializer_name", "body", "error"), [
    ("CreateProjectInput", {"name": "Apollo", "description": 0}, {"description": ["Not a valid string."]}),
    ("CreateProjectInput", {"name": 12}, {"name": ["Not a valid string."]}),
    ("CreateTicketInput", {"title": "x", "checklist": ["a", 3, True]},
     {"checklist": {1: ["Not a valid string."], 2: ["Not a valid string."]}}),
    ("ManualEntryInput", {"minutes": 5, "note": 1.5}, {"note": ["Not a valid string."]}),
    ("CreateTagInput", {"name": ["x"]}, {"name": ["Not a valid string."]}),
])
def test_a_number_where_the_reference_declares_a_string_is_refused(serializer_name, body, error):
    serializer_class = next(cls for cls in INPUTS if cls.__name__ == serializer_name)
    with pytest.raises(ValidationError) as refused:
        validated(serializer_class, body)
    assert refused.value.detail == error


def test_the_api_answers_422_naming_the_field(client_for, manager, project):
    response = client_for(manager).post("/api/v1/projects", {"name": "Gemini", "description": 0}, format="json")
    assert (response.status_code, response.json()) == (
        422, {"code": "validation_failed", "error": "description: Not a valid string.", "field": "description"})


def test_an_upload_lists_one_to_twenty_files_in_the_reference():
    upload = schema()["components"]["schemas"]["AttachmentUploadRequest"]["properties"]["files[]"]
    assert (upload["minItems"], upload["maxItems"]) == (1, 20)
