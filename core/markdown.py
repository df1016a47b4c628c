"""Markdown as HTML a browser may show (docs articles, ticket descriptions on the board): rendered by
markdown-it-py, then sanitized by nh3.

Raw HTML in the Markdown is escaped by the renderer (`html: False`) and markdown-it already refuses
`javascript:`-like link targets; nh3 is the one guarantee whatever either misses: an allow-list of
tags and attributes (no `on*`, no `style`), link and image URLs limited to http(s), mailto or
relative, and links that cannot reach back into this page (`rel=noopener noreferrer`).
"""

import nh3
from markdown_it import MarkdownIt

_renderer = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])

TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "s", "del", "code", "pre", "blockquote",
    "ul", "ol", "li", "a", "img", "table", "thead", "tbody", "tr", "th", "td",
}
ATTRIBUTES = {"a": {"href", "title"}, "img": {"src", "alt", "title"}, "ol": {"start"}, "code": {"class"}}
URL_SCHEMES = {"http", "https", "mailto"}


def sanitize(html: str) -> str:
    return nh3.clean(html, tags=TAGS, attributes=ATTRIBUTES, url_schemes=URL_SCHEMES, link_rel="noopener noreferrer")


def render_markdown(source: str) -> str:
    return sanitize(_renderer.render(source))
