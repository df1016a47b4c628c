"""Admin pages as a browser submits them."""

from html.parser import HTMLParser


class FormFields(HTMLParser):
    """The values a browser would submit for the admin's change form (checked boxes, selected options)."""

    def __init__(self):
        super().__init__()
        self.data: dict[str, list[str]] = {}
        self.select: str | None = None
        self.textarea: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        name = attrs.get("name")
        if tag == "input" and name and attrs.get("type") not in ("submit", "button", "file"):
            if attrs.get("type") in ("checkbox", "radio") and "checked" not in attrs:
                return
            self.data.setdefault(name, []).append(attrs.get("value") or ("on" if attrs.get("type") == "checkbox" else ""))
        elif tag == "select" and name:
            self.select = name
            self.data.setdefault(name, [])
        elif tag == "option" and self.select and "selected" in attrs:
            self.data[self.select].append(attrs.get("value", ""))
        elif tag == "textarea" and name:
            self.textarea = name
            self.data[name] = [""]

    def handle_endtag(self, tag):
        if tag == "select":
            self.select = None
        elif tag == "textarea":
            self.textarea = None

    def handle_data(self, data):
        if self.textarea:
            self.data[self.textarea][0] += data


def form_of(client, url: str) -> dict[str, list[str]]:
    """What submitting the admin page at `url` unchanged would send."""
    form = FormFields()
    form.feed(client.get(url).content.decode())
    return form.data
