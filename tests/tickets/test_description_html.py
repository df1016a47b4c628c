"""The detail's opt-in `description_html` (`?description=html`): the Markdown as the board's panel shows it,
rendered and sanitized by the docs pages' renderer, for the ticket's readers only."""

import pytest
from django.utils import timezone

from core.markdown import render_markdown
from tests.factories import CommentFactory, ProjectFactory, TicketFactory

PAYLOAD = 'Some **bold** <script>alert(1)</script> [x](javascript:alert(2)) <img src=x onerror="alert(3)">'


def detail(project, number: int, **params) -> str:
    query = "".join(f"?{name}={value}" for name, value in params.items())
    return f"/api/v1/projects/{project.id}/tickets/{number}{query}"


@pytest.fixture
def api(client_for, viewer):
    return client_for(viewer)


def test_a_member_gets_the_sanitized_rendering_beside_the_source(api, project):
    ticket = TicketFactory(project=project, description=PAYLOAD)
    plain = api.get(detail(project, ticket.number)).json()["ticket"]
    rendered = api.get(detail(project, ticket.number, description="html"))
    assert rendered.status_code == 200
    html = rendered.json()["ticket"].pop("description_html")
    assert rendered.json()["ticket"] == plain  # nothing else changes
    assert html == render_markdown(PAYLOAD)
    assert "<strong>bold</strong>" in html and "&lt;script&gt;" in html
    assert "<script" not in html and "href=\"javascript" not in html and "<img" not in html
    assert "description_html" not in plain


def test_comments_are_rendered_too(api, project):
    ticket = TicketFactory(project=project)
    CommentFactory(ticket=ticket, message="- [x] **done** <script>alert(1)</script>")
    plain = api.get(detail(project, ticket.number)).json()["ticket"]["comments"]
    rendered = api.get(detail(project, ticket.number, description="html")).json()["ticket"]["comments"]
    assert [comment.pop("message_html") for comment in rendered] == [
        render_markdown("- [x] **done** <script>alert(1)</script>")]
    assert rendered == plain and "message_html" not in plain[0]


def test_each_representation_has_its_own_etag(api, project):
    ticket = TicketFactory(project=project, description="*kept*")
    plain, rendered = api.get(detail(project, ticket.number)), api.get(detail(project, ticket.number, description="html"))
    assert plain["ETag"] != rendered["ETag"]
    again = api.get(detail(project, ticket.number, description="html"), HTTP_IF_NONE_MATCH=rendered["ETag"])
    assert again.status_code == 304


def test_an_empty_description_renders_empty_and_an_archived_one_is_read_like_its_detail(api, project):
    empty = TicketFactory(project=project)
    archived = TicketFactory(project=project, description="*kept*", archived_at=timezone.now())
    assert api.get(detail(project, empty.number, description="html")).json()["ticket"]["description_html"] == ""
    assert (api.get(detail(project, archived.number, description="html")).json()["ticket"]["description_html"]
            == "<p><em>kept</em></p>\n")


def test_another_value_is_422_naming_it(api, project):
    ticket = TicketFactory(project=project)
    response = api.get(detail(project, ticket.number, description="markdown"))
    assert response.status_code == 422
    assert response.json()["field"] == "description"


def test_a_deleted_ticket_another_projects_or_a_non_member_gets_404(api, client_for, outsider, project):
    deleted = TicketFactory(project=project, description="gone", deleted_at=timezone.now())
    elsewhere = TicketFactory(project=ProjectFactory(), description="not yours")
    assert api.get(detail(project, deleted.number, description="html")).status_code == 404
    assert api.get(detail(elsewhere.project, elsewhere.number, description="html")).status_code == 404
    ticket = TicketFactory(project=project, description="secret")
    assert client_for(outsider).get(detail(project, ticket.number, description="html")).status_code == 404
