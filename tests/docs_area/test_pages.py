"""The documentation pages for people: members only, the tree beside the article, and Markdown that can
never run a script, whatever an article holds."""

from html.parser import HTMLParser

import pytest
from django.utils import timezone

from core.markdown import render_markdown, sanitize
from projects.models import Project
from tests.factories import ArticleCommentFactory, ArticleFactory, FolderFactory

PAYLOADS = [
    "<script>alert(1)</script>",
    "[x](javascript:alert(1))",
    "[y](JaVaScRiPt:alert(1))",
    "[z](  javascript:alert(1))",
    "<img src=x onerror=alert(1)>",
    "![img](javascript:alert(1))",
    "<a href=\"javascript:alert(1)\">raw link</a>",
    "<div onclick=\"alert(1)\">raw html</div>",
    "<svg onload=alert(1)>",
    "<iframe src=\"https://evil.example\"></iframe>",
    "[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "<style>body{display:none}</style>",
    "`<script>alert(1)</script>` and\n\n```\n<script>alert(1)</script>\n```",
]
DANGEROUS_TAGS = {"script", "iframe", "svg", "style", "object", "embed", "math"}


class Elements(HTMLParser):
    """Every element of a page with its attributes, as a browser's parser would see them."""

    def __init__(self, html: str):
        super().__init__()
        self.elements: list[tuple[str, dict]] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))


def assert_inert(html: str) -> None:
    for tag, attributes in Elements(html).elements:
        if tag == "script" and attributes.get("src", "").startswith("/static/js/"):
            continue  # the service's own scripts (the header's notification badge), never an article's
        assert tag not in DANGEROUS_TAGS, html
        for name, value in attributes.items():
            assert not name.startswith("on"), html
            if name in {"href", "src"}:
                assert value.strip().lower().split(":")[0] in {"http", "https", "mailto"} or ":" not in value, html


def page_url(project, article=None) -> str:
    return f"/projects/{project.id}/docs/" + (f"articles/{article.id}/" if article else "")


@pytest.fixture
def browser(client, viewer):
    client.force_login(viewer)
    return client


def test_the_tree_beside_the_article(browser, project, article):
    sub = FolderFactory(project=project, parent=article.folder, title="Deployment")
    nested = ArticleFactory(project=project, folder=sub, title="Rollback plan")
    ArticleFactory(project=project, title="Hidden", deleted_at=timezone.now())
    ArticleCommentFactory(article=article, message="Very clear")

    response = browser.get(page_url(project, article))

    html = response.content.decode()
    assert response.status_code == 200
    assert "<h1>Setup</h1>" in html and "<p>Run it.</p>" in html
    assert all(text in html for text in ["Guides", "Deployment", "Rollback plan", "Very clear"])
    assert f'href="{page_url(project, nested)}"' in html
    assert "Hidden" not in html


def test_the_docs_home(browser, project, article):
    response = browser.get(page_url(project))
    assert response.status_code == 200
    assert "Guides" in response.content.decode() and "Setup" in response.content.decode()


@pytest.mark.parametrize("payload", PAYLOADS)
def test_stored_xss_payloads_render_inert(browser, project, payload):
    article = ArticleFactory(project=project, title="<script>alert('title')</script>", content=payload)
    ArticleCommentFactory(article=article, message="<img src=x onerror=alert(1)>")
    response = browser.get(page_url(project, article))
    assert response.status_code == 200
    html = response.content.decode()
    assert_inert(html)
    assert "<script>alert" not in html


@pytest.mark.parametrize("payload", PAYLOADS)
def test_the_sanitizer_alone_stops_raw_html(payload):
    """Even if the renderer let raw HTML through, nh3 would leave nothing that runs."""
    assert_inert(sanitize(payload))


def test_links_keep_safe_targets_and_lose_the_opener():
    html = render_markdown("[site](https://example.com) [mail](mailto:a@example.com) [page](/projects/)")
    assert html == ('<p><a href="https://example.com" rel="noopener noreferrer">site</a> '
                    '<a href="mailto:a@example.com" rel="noopener noreferrer">mail</a> '
                    '<a href="/projects/" rel="noopener noreferrer">page</a></p>\n')


def test_markdown_features():
    html = render_markdown("# T\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n~~gone~~ **bold**\n\n```py\nx = 1\n```")
    assert "<h1>T</h1>" in html and "<td>1</td>" in html and "<s>gone</s>" in html
    assert '<code class="language-py">x = 1\n</code>' in html


def test_members_only(client, outsider, project, article):
    assert client.get(page_url(project, article)).status_code == 302  # to the login page
    client.force_login(outsider)
    assert client.get(page_url(project)).status_code == 404
    assert client.get(page_url(project, article)).status_code == 404


def test_deleted_or_foreign_articles(browser, project):
    deleted = ArticleFactory(project=project, deleted_at=timezone.now())
    foreign = ArticleFactory()
    assert browser.get(page_url(project, deleted)).status_code == 404
    assert browser.get(page_url(project, foreign)).status_code == 404


def test_docs_switched_off(browser, project, article):
    Project.objects.filter(pk=project.pk).update(docs_enabled=False)
    assert browser.get(page_url(project)).status_code == 404
    assert browser.get(page_url(project, article)).status_code == 404


def test_the_board_links_to_the_docs_only_when_enabled(browser, project):
    link = f'href="{page_url(project)}"'
    assert link in browser.get(f"/projects/{project.id}/board/").content.decode()
    Project.objects.filter(pk=project.pk).update(docs_enabled=False)
    assert link not in browser.get(f"/projects/{project.id}/board/").content.decode()
