"""A title in any script gives a unicode slug, and the API reference must accept it. A JSON Schema
`pattern` is an ECMA-262 regex, where `\\w` is ASCII only: schemathesis found `^[-\\w]+$` declared for
slugs that the service answers with `è-p3z3q`. The check here reads patterns as such a validator does."""

import re

from tests.schema import schema

from .conftest import docs_url


def slug_patterns(component: str) -> list[str]:
    slug = schema()["components"]["schemas"][component]["properties"]["slug"]
    return [slug["pattern"]] if "pattern" in slug else []


def test_unicode_slugs_match_the_declared_patterns(client_for, editor, project):
    api = client_for(editor)
    folder = api.post(docs_url(project, "/folders"), {"title": "Übersicht"}, format="json").json()["folder"]
    article = api.post(docs_url(project, "/articles"), {"title": "Éclair für alle"}, format="json").json()["article"]
    detail = api.get(docs_url(project, f"/articles/{article['id']}")).json()

    assert (folder["slug"], article["slug"]) == ("übersicht", "éclair-für-alle")
    for component, slug in [("DocsFolderOutput", folder["slug"]), ("ArticleOutput", article["slug"]),
                            ("ArticleDetailOutput", detail["article"]["slug"])]:
        for pattern in slug_patterns(component):
            assert re.search(pattern, slug, re.ASCII), f"{component}.slug {slug!r} contradicts {pattern!r}"
