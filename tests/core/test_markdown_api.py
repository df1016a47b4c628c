"""POST /api/v1/markdown: a preview, rendered by the one renderer, for any signed-in caller; nothing is stored."""

import pytest

from core.markdown import render_markdown

URL = "/api/v1/markdown"


def test_a_signed_in_caller_gets_the_html_the_service_shows(client_for, outsider):
    text = "- [x] **done** <script>alert(1)</script> [x](javascript:alert(2))"
    response = client_for(outsider).post(URL, {"text": text})
    assert (response.status_code, response.json()) == (200, {"html": render_markdown(text)})
    html = response.json()["html"]
    assert "<strong>done</strong>" in html and "<script" not in html and 'href="javascript' not in html
    assert 'type="checkbox"' in html


def test_empty_text_renders_empty(client_for, outsider):
    assert client_for(outsider).post(URL, {"text": ""}).json() == {"html": ""}


@pytest.mark.parametrize(("body", "error"), [
    ({}, "text is required"),
    ({"text": 12}, "text: Not a valid string."),
    ({"text": "x" * 100_001}, "text: Ensure this field has no more than 100000 characters."),
])
def test_a_bad_body_is_422(client_for, outsider, body, error):
    response = client_for(outsider).post(URL, body)
    assert (response.status_code, response.json()["error"]) == (422, error)


def test_needs_a_token_and_takes_post_only(anonymous, client_for, outsider):
    assert anonymous.post(URL, {"text": "x"}).status_code == 401
    assert client_for(outsider).get(URL).status_code == 405
