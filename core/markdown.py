"""Markdown as HTML a browser may show (docs articles, ticket descriptions, comments on the board): rendered
by markdown-it-py, then sanitized by nh3.

Raw HTML in the Markdown is escaped by the renderer (`html: False`) and markdown-it already refuses
`javascript:`-like link targets; nh3 is the one guarantee whatever either misses: an allow-list of
tags and attributes (no `on*`, no `style`), link and image URLs limited to http(s), mailto or
relative, and links that cannot reach back into this page (`rel=noopener noreferrer`).

GFM task lists (`- [ ]`, `- [x]`) become checkboxes through mdit-py-plugins' tasklists plugin, each in a label
with its item's text (so that it has a name for assistive technology). The one input
the sanitizer lets through is what that plugin writes: a checkbox (no other type), always disabled (a rendered
page edits nothing), with its classes and nothing else.
"""

import nh3
from markdown_it import MarkdownIt
from mdit_py_plugins.tasklists import tasklists_plugin

_renderer = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"]).use(tasklists_plugin, label=True)

TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "s", "del", "code", "pre", "blockquote",
    "ul", "ol", "li", "a", "img", "table", "thead", "tbody", "tr", "th", "td", "input", "label",
}
ATTRIBUTES = {"a": {"href", "title"}, "img": {"src", "alt", "title"}, "ol": {"start"}, "code": {"class"}}
# Attribute values allowed only as listed, and the one set whatever the source says (one only: nh3 writes the
# attributes it sets in no fixed order, and the same Markdown must always give the same HTML, ETags hang on it).
ATTRIBUTE_VALUES = {"input": {"type": {"checkbox"}, "checked": {"checked"}}}
FORCED_VALUES = {"input": {"disabled": "disabled"}}
CLASSES = {"ul": {"contains-task-list"}, "ol": {"contains-task-list"}, "li": {"task-list-item"},
           "input": {"task-list-item-checkbox"}}
URL_SCHEMES = {"http", "https", "mailto"}


def sanitize(html: str) -> str:
    return nh3.clean(html, tags=TAGS, attributes=ATTRIBUTES, tag_attribute_values=ATTRIBUTE_VALUES,
                     set_tag_attribute_values=FORCED_VALUES, allowed_classes=CLASSES, url_schemes=URL_SCHEMES,
                     link_rel="noopener noreferrer")


def render_markdown(source: str) -> str:
    return sanitize(_renderer.render(source))
