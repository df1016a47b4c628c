"""GFM task lists in the one renderer (core/markdown.py): checkboxes from mdit-py-plugins' tasklists plugin,
kept by the sanitizer as the plugin writes them, and no input of any other kind."""

from html.parser import HTMLParser

import pytest

from core.markdown import render_markdown, sanitize

CHECKBOX = ("input", {"class": "task-list-item-checkbox", "type": "checkbox", "disabled": "disabled"})
CHECKED = ("input", {**CHECKBOX[1], "checked": "checked"})


class Elements(HTMLParser):
    """Each start tag with its attributes (the sanitizer writes them in no fixed order), and the text."""

    def __init__(self, html: str):
        super().__init__()
        self.found: list = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, dict(attrs)))

    def handle_data(self, data):
        if data.strip():
            self.found.append(data.strip())


def elements(html: str) -> list:
    return Elements(html).found


def test_task_lists_render_as_disabled_checkboxes():
    html = render_markdown("- [ ] wash\n- [x] dry\n- plain\n\n1. [X] first\n")
    item, label = ("li", {"class": "task-list-item"}), ("label", {})  # the label names the box: its item's text
    assert elements(html) == [
        ("ul", {"class": "contains-task-list"}), item, label, CHECKBOX, "wash", item, label, CHECKED, "dry",
        ("li", {}), "plain", ("ol", {"class": "contains-task-list"}), item, label, CHECKED, "first"]


def test_brackets_elsewhere_stay_text():
    assert render_markdown("[ ] not in a list, [x] neither") == "<p>[ ] not in a list, [x] neither</p>\n"


def test_raw_inputs_in_the_source_are_escaped():
    html = render_markdown('- [ ] <input type="text" autofocus onfocus="alert(1)">')
    assert [found for found in elements(html) if found[0] == "input"] == [CHECKBOX]
    assert "&lt;input" in html


@pytest.mark.parametrize("raw", [
    '<input type="text" name="q" value="x" onfocus="alert(1)" autofocus formaction="https://evil.example">',
    '<input type="checkbox" class="evil" checked="yes" onclick="alert(1)">',
    '<input type="image" src="https://evil.example/x.png">',
])
def test_the_sanitizer_leaves_any_input_disabled_and_a_checkbox_at_most(raw):
    """Even if the renderer let raw HTML through: disabled, of no type but checkbox, no class but the plugin's."""
    [(tag, attributes)] = elements(sanitize(raw))
    assert (tag, attributes.pop("class", "")) == ("input", "")
    assert attributes in ({"type": "checkbox", "disabled": "disabled"}, {"disabled": "disabled"})


def test_the_same_markdown_always_gives_the_same_html():
    """ETags of rendered descriptions hang on it."""
    assert len({render_markdown("- [x] done\n- [ ] not yet") for _ in range(100)}) == 1
