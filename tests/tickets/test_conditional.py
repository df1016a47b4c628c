"""Conditional requests: ETag on the ticket detail, the board and a docs article; If-None-Match answers 304,
If-Match refuses a write based on a stale version with 412 and changes nothing."""

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from docs_area import services as docs_services
from docs_area.models import Article, ArticleComment
from tests.factories import TicketFactory
from tickets import services
from tickets.models import Activity, Ticket

from .conftest import status_of, ticket_url

STALE = '"0123456789abcdef0123456789abcdef"'


@pytest.fixture
def api(client_for, editor):
    return client_for(editor)


def board_url(project) -> str:
    return f"/api/v1/projects/{project.id}/board"


class TestDetail:
    def test_an_unchanged_ticket_is_not_sent_again(self, api, ticket):
        first = api.get(ticket_url(ticket))
        etag = first["ETag"]
        assert first.status_code == 200 and etag.startswith('"')
        again = api.get(ticket_url(ticket), HTTP_IF_NONE_MATCH=etag)
        assert (again.status_code, again.content, again["ETag"]) == (304, b"", etag)
        assert api.get(ticket_url(ticket), HTTP_IF_NONE_MATCH=f"W/{etag}, {STALE}").status_code == 304
        assert api.get(ticket_url(ticket), HTTP_IF_NONE_MATCH=STALE).status_code == 200

    @pytest.mark.parametrize("change", ["comment", "checklist", "assign", "move", "blocker"])
    def test_the_etag_changes_with_anything_the_detail_shows(self, api, ticket, project, editor, change):
        etag = api.get(ticket_url(ticket))["ETag"]
        {"comment": lambda: api.post(ticket_url(ticket, "comments"), {"comment": "new"}),
         "checklist": lambda: api.post(f"/api/v1/tickets/{ticket.pk}/checklist", {"text": "step"}),
         "assign": lambda: api.post(ticket_url(ticket, "assign"), {"user_id": editor.pk}),
         "move": lambda: api.post(ticket_url(ticket, "move"), {"status": "todo"}),
         "blocker": lambda: api.post(f"/api/v1/tickets/{ticket.pk}/blockers",
                                     {"blocker_ticket_id": TicketFactory(project=project).pk})}[change]()
        response = api.get(ticket_url(ticket), HTTP_IF_NONE_MATCH=etag)
        assert response.status_code == 200 and response["ETag"] != etag

    def test_a_blocking_ticket_that_moves_changes_the_etag_of_the_one_it_blocks(self, api, ticket, project):
        blocker = TicketFactory(project=project)
        api.post(f"/api/v1/tickets/{ticket.pk}/blockers", {"blocker_ticket_id": blocker.pk})
        etag = api.get(ticket_url(ticket))["ETag"]
        api.post(ticket_url(blocker, "move"), {"status": "done"})
        assert api.get(ticket_url(ticket), HTTP_IF_NONE_MATCH=etag).status_code == 200

    @pytest.mark.parametrize(("action", "body"), [("update", {"title": "Renamed"}), ("move", {"status": "done"})])
    def test_a_write_on_the_current_version_answers_the_new_etag(self, api, ticket, action, body):
        etag = api.get(ticket_url(ticket))["ETag"]
        response = api.post(ticket_url(ticket, action), body, HTTP_IF_MATCH=etag)
        assert (response.status_code, response.json()) == (200, {"ok": True})
        assert response["ETag"] != etag
        assert response["ETag"] == api.get(ticket_url(ticket))["ETag"]

    @pytest.mark.parametrize(("action", "body"), [("update", {"title": "Renamed"}), ("move", {"status": "done"})])
    def test_a_write_on_a_stale_version_is_412_and_changes_nothing(self, api, ticket, action, body, board_listener,
                                                                   django_capture_on_commit_callbacks):
        etag = api.get(ticket_url(ticket))["ETag"]
        with django_capture_on_commit_callbacks(execute=True):
            api.post(ticket_url(ticket, "comments"), {"comment": "meanwhile"})
        before = Ticket.objects.get(pk=ticket.pk)
        with django_capture_on_commit_callbacks(execute=True):
            response = api.post(ticket_url(ticket, action), body, HTTP_IF_MATCH=etag)
        assert (response.status_code, response.json()) == (
            412, {"code": "precondition_failed", "error": "the resource changed since that ETag: read it again"})
        after = Ticket.objects.get(pk=ticket.pk)
        assert (after.title, after.status_id, after.updated_at) == (before.title, before.status_id, before.updated_at)
        assert board_listener.events() == ["ticket.updated", "comment.created"]  # the comment's, nothing more
        assert not Activity.objects.filter(ticket=ticket, action__in=["updated", "moved"]).exists()

    def test_if_match_star_and_a_weak_etag(self, api, ticket):
        etag = api.get(ticket_url(ticket))["ETag"]
        assert api.post(ticket_url(ticket, "update"), {"title": "A"}, HTTP_IF_MATCH="*").status_code == 200
        etag = api.get(ticket_url(ticket))["ETag"]
        weak = api.post(ticket_url(ticket, "update"), {"title": "B"}, HTTP_IF_MATCH=f"W/{etag}")
        assert weak.status_code == 412  # If-Match compares strongly

    def test_without_if_match_writes_as_before(self, api, ticket):
        response = api.post(ticket_url(ticket, "update"), {"title": "Plain"})
        assert response.status_code == 200 and response["ETag"] == api.get(ticket_url(ticket))["ETag"]

    @pytest.mark.django_db(transaction=True)  # commits for real, so that a write can land right after one
    @pytest.mark.parametrize(("action", "service", "body"), [("update", "update_ticket", {"title": "Renamed"}),
                                                              ("move", "move_ticket", {"status": "done"})])
    def test_the_etag_a_write_answers_is_of_the_version_it_made(self, api, ticket, editor, monkeypatch, action,
                                                                 service, body):
        landing_right_after(monkeypatch, services, service, lambda: services.add_comment(
            ticket=Ticket.objects.get(pk=ticket.pk), author=editor, message="landed after"))
        response = api.post(ticket_url(ticket, action), body, HTTP_IF_MATCH=api.get(ticket_url(ticket))["ETag"])
        assert response.status_code == 200
        current = api.get(ticket_url(ticket))["ETag"]
        assert response["ETag"] != current  # the comment shows now
        # The answered ETag is of the version the write made: a write based on it is refused, as stale.
        assert api.post(ticket_url(ticket, "update"), {"title": "Mine"}, HTTP_IF_MATCH=response["ETag"]).status_code == 412
        assert api.post(ticket_url(ticket, "update"), {"title": "Mine"}, HTTP_IF_MATCH=current).status_code == 200

    def test_the_etag_is_the_version_a_write_reads_under_its_lock(self, api, ticket):
        """No write computes the detail to answer its ETag: what the one read of the ticket gives is enough."""
        etag = api.get(ticket_url(ticket))["ETag"]
        response = api.post(ticket_url(ticket, "update"), {"title": "Renamed"}, HTTP_IF_MATCH=etag)
        assert response["ETag"] == api.get(ticket_url(ticket))["ETag"] != etag
        assert Ticket.objects.get(pk=ticket.pk).version == ticket.version + 1


def landing_right_after(monkeypatch, module, name: str, land) -> None:
    """`module.name`, a write's service, followed right after its commit by `land()`: another write's rows,
    there before the view answers."""
    write = getattr(module, name)

    def then_another(**kwargs):
        written = write(**kwargs)
        transaction.on_commit(land)
        return written

    monkeypatch.setattr(module, name, then_another)


class TestBoard:
    def test_an_unchanged_board_is_304_and_any_change_shows(self, api, project, ticket, manager, client_for):
        etag = api.get(board_url(project))["ETag"]
        assert api.get(board_url(project), HTTP_IF_NONE_MATCH=etag).status_code == 304
        api.post(ticket_url(ticket, "comments"), {"comment": "a card's count changes"})
        changed = api.get(board_url(project), HTTP_IF_NONE_MATCH=etag)
        assert changed.status_code == 200 and changed["ETag"] != etag

    def test_changes_that_send_no_frame_change_it_too(self, api, project, ticket):
        etag = api.get(board_url(project))["ETag"]
        project.statuses.filter(slug="review").update(hidden=True)  # in the admin
        assert api.get(board_url(project), HTTP_IF_NONE_MATCH=etag).status_code == 200

    def test_each_member_has_an_etag_of_their_own(self, client_for, project, editor, viewer):
        assert client_for(editor).get(board_url(project))["ETag"] != client_for(viewer).get(board_url(project))["ETag"]

    def test_a_304_reads_no_card(self, api, project):
        TicketFactory.create_batch(30, project=project)
        etag = api.get(board_url(project))["ETag"]
        with CaptureQueriesContext(connection) as reads:
            assert api.get(board_url(project), HTTP_IF_NONE_MATCH=etag).status_code == 304
        of_tickets = [query["sql"] for query in reads.captured_queries if Ticket._meta.db_table in (query["sql"] or "")]
        assert len(of_tickets) == 1 and "COUNT" in of_tickets[0]  # the velocity, a number: no card is read


class TestArticle:
    @pytest.fixture
    def article(self, project, editor, client_for):
        response = client_for(editor).post(f"/api/v1/projects/{project.id}/docs/articles",
                                           {"title": "Runbook", "content": "v1"})
        return Article.objects.get(pk=response.json()["article"]["id"])

    def url(self, article) -> str:
        return f"/api/v1/projects/{article.project_id}/docs/articles/{article.pk}"

    def test_304_then_a_write_on_the_current_version(self, api, article):
        etag = api.get(self.url(article))["ETag"]
        assert api.get(self.url(article), HTTP_IF_NONE_MATCH=etag).status_code == 304
        response = api.post(self.url(article), {"content": "v2"}, HTTP_IF_MATCH=etag)
        assert response.status_code == 200
        assert response["ETag"] == api.get(self.url(article))["ETag"] != etag

    def test_a_stale_write_is_412_and_keeps_the_article(self, api, article):
        etag = api.get(self.url(article))["ETag"]
        api.post(self.url(article), {"content": "someone else's"})
        response = api.post(self.url(article), {"content": "mine"}, HTTP_IF_MATCH=etag)
        assert response.status_code == 412
        article.refresh_from_db()
        assert (article.content, article.versions.count()) == ("someone else's", 1)

    @pytest.mark.django_db(transaction=True)
    def test_the_etag_a_write_answers_is_of_the_version_it_made(self, api, article, editor, monkeypatch):
        landing_right_after(monkeypatch, docs_services, "update_article",
                            lambda: ArticleComment.objects.create(article=article, user=editor, message="landed after"))
        response = api.post(self.url(article), {"content": "v2"}, HTTP_IF_MATCH=api.get(self.url(article))["ETag"])
        assert response.status_code == 200
        assert response["ETag"] != api.get(self.url(article))["ETag"]
        ArticleComment.objects.all().delete()
        assert response["ETag"] == api.get(self.url(article))["ETag"]


def test_the_status_of_a_stale_move_stays(api, ticket, project):
    etag = api.get(ticket_url(ticket))["ETag"]
    api.post(ticket_url(ticket, "update"), {"title": "changed"})
    api.post(ticket_url(ticket, "move"), {"status": "done"}, HTTP_IF_MATCH=etag)
    assert Ticket.objects.get(pk=ticket.pk).status == status_of(project, "backlog")
