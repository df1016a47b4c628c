"""Ticket search: every rule of the interface, exact shapes, and a fixed number of queries."""

from datetime import timedelta
from urllib.parse import urlencode

import pytest
from django.db import connection
from django.utils import timezone

from projects.roles import Role
from tests.factories import ProjectFactory, TagFactory, TicketFactory, UserFactory
from tickets.models import Comment, Ticket
from tickets.search import excerpt

from .conftest import status_of


def search(client, project, **params):
    return client.get(f"/api/v1/projects/{project.id}/tickets/search?{urlencode(params, doseq=True)}")


def found(client, project, **params) -> list[int]:
    response = search(client, project, **params)
    assert response.status_code == 200, response.json()
    return [ticket["id"] for ticket in response.json()["tickets"]]


def updated(ticket, minutes_ago: int):
    Ticket.objects.filter(pk=ticket.pk).update(updated_at=timezone.now() - timedelta(minutes=minutes_ago))


def test_exact_shape(client_for, project, viewer):
    tag = TagFactory(project=project, name="auth", color="#112233")
    ticket = TicketFactory(project=project, title="Login fails", description="The login form hangs", type="bug",
                           status=status_of(project, "todo"), tags=[tag])
    author = UserFactory(name="Ann")
    Comment.objects.create(ticket=ticket, author=author, message="Cannot login since Monday")
    Comment.objects.create(ticket=ticket, author=author, message="login deleted", deleted_at=timezone.now())
    Comment.objects.create(ticket=ticket, author=author, message="Unrelated")

    response = search(client_for(viewer), project, q="LOGIN")

    assert response.status_code == 200
    assert response.json() == {"tickets": [{
        "id": ticket.id, "project_ticket_number": ticket.number, "prefix_ref": f"APL-{ticket.number}",
        "title": "Login fails", "status": "todo", "type": "bug", "archived": False, "comment_count": 2,
        "tags": [{"id": tag.id, "name": "auth", "color": "#112233"}],
        "matches": [
            {"field": "title", "text": "Login fails"},
            {"field": "description", "text": "The login form hangs"},
            {"field": "comment", "text": "Cannot login since Monday", "author": {"id": author.id, "name": "Ann"}},
        ],
    }], "total": 1, "limit": 100, "total_capped": False}


def test_exact_shape_of_a_page_with_every_kind_of_hit(client_for, project, viewer):
    """Title hits first, newest first; tags in the project's order; a nameless author by username; the latest
    three comment hits, newest first; text cut around the hit, on one line; archived tickets with archived=1."""
    late, early = TagFactory(project=project, sort_order=9, name="late"), TagFactory(project=project, sort_order=1)
    same_order = TagFactory(project=project, sort_order=1, name="same order, higher id")
    nameless = UserFactory(name="")
    first = TicketFactory(project=project, title='Émoji 🚀 needle "quotes" \\ </script>', description="no",
                          tags=[late, same_order, early])
    shelved = TicketFactory(project=project, description="line\n\n  needle " + "x" * 100, tags=[early],
                            archived_at=timezone.now())
    done = TicketFactory(project=project, status=status_of(project, "done"), title="Needle twice",
                         description="needle")
    for n in range(5):
        Comment.objects.create(ticket=shelved if n % 2 else first, author=nameless if n % 3 else viewer,
                               message=f"a needle {n}")
    Comment.objects.create(ticket=first, author=viewer, message="needle deleted", deleted_at=timezone.now())
    updated(first, minutes_ago=5)
    updated(shelved, minutes_ago=10)

    response = search(client_for(viewer), project, q="needle", archived=1)

    def ref(ticket) -> dict:
        return {"id": ticket.id, "project_ticket_number": ticket.number, "prefix_ref": f"APL-{ticket.number}",
                "title": ticket.title, "status": ticket.status.slug, "type": "feature"}

    def tag(tag) -> dict:
        return {"id": tag.id, "name": tag.name, "color": tag.color}

    def comment_hit(n: int) -> dict:
        author = nameless if n % 3 else viewer
        return {"field": "comment", "text": f"a needle {n}", "author": {"id": author.id, "name": author.display_name}}

    assert response.status_code == 200
    assert response.json() == {"tickets": [
        {**ref(done), "archived": False, "comment_count": 0, "tags": [],
         "matches": [{"field": "title", "text": "Needle twice"}, {"field": "description", "text": "needle"}]},
        {**ref(first), "archived": False, "comment_count": 3, "tags": [tag(early), tag(same_order), tag(late)],
         "matches": [{"field": "title", "text": first.title}, comment_hit(4), comment_hit(2), comment_hit(0)]},
        {**ref(shelved), "archived": True, "comment_count": 2, "tags": [tag(early)],
         "matches": [{"field": "description", "text": "line needle " + "x" * 59 + "…"}, comment_hit(3),
                     comment_hit(1)]},
    ], "total": 3, "limit": 100, "total_capped": False}
    assert nameless.display_name == nameless.username


class TestMatching:
    def test_each_field_and_only_live_tickets_of_the_project(self, client_for, project, viewer):
        by_title = TicketFactory(project=project, title="Payment page")
        by_description = TicketFactory(project=project, description="the PAYMENT provider")
        by_comment = TicketFactory(project=project)
        Comment.objects.create(ticket=by_comment, author=viewer, message="payment again")
        only_deleted_comment = TicketFactory(project=project)
        Comment.objects.create(ticket=only_deleted_comment, author=viewer, message="payment",
                               deleted_at=timezone.now())
        TicketFactory(project=project, title="payment", deleted_at=timezone.now())
        TicketFactory(project=project, title="payment", archived_at=timezone.now())
        TicketFactory(title="payment")  # another project
        assert set(found(client_for(viewer), project, q="Payment")) == {by_title.id, by_description.id,
                                                                      by_comment.id}

    @pytest.mark.parametrize(("fields", "expected"), [
        (["title"], {"title"}),
        (["description"], {"description"}),
        (["comments"], {"comment"}),
        (["title", "comments"], {"title", "comment"}),
    ])
    def test_in_selects_the_fields(self, client_for, project, viewer, fields, expected):
        tickets = {"title": TicketFactory(project=project, title="cache bug"),
                   "description": TicketFactory(project=project, description="a cache bug"),
                   "comment": TicketFactory(project=project)}
        Comment.objects.create(ticket=tickets["comment"], author=viewer, message="cache")
        body = search(client_for(viewer), project, q="cache", **{"in[]": fields}).json()
        assert {ticket["id"] for ticket in body["tickets"]} == {tickets[field].id for field in expected}
        assert {match["field"] for ticket in body["tickets"] for match in ticket["matches"]} == expected

    def test_status_filter(self, client_for, project, viewer):
        todo = TicketFactory(project=project, title="deploy", status=status_of(project, "todo"))
        review = TicketFactory(project=project, title="deploy", status=status_of(project, "review"))
        TicketFactory(project=project, title="deploy")
        api = client_for(viewer)
        assert found(api, project, q="deploy", **{"status[]": "todo"}) == [todo.id]
        assert set(found(api, project, q="deploy", **{"status[]": ["todo", "review"]})) == {todo.id, review.id}

    def test_archived_only_when_asked(self, client_for, project, viewer):
        shelved = TicketFactory(project=project, title="old export", archived_at=timezone.now())
        TicketFactory(project=project, title="old export", archived_at=timezone.now(), deleted_at=timezone.now())
        api = client_for(viewer)
        assert found(api, project, q="export") == found(api, project, q="export", archived=0) == []
        body = search(api, project, q="export", archived=1).json()
        assert ([t["id"] for t in body["tickets"]], body["tickets"][0]["archived"]) == ([shelved.id], True)

    @pytest.mark.parametrize("query", ["100%", "snake_case", "C:\\temp"])
    def test_like_wildcards_are_literal(self, client_for, project, viewer, query):
        hit = TicketFactory(project=project, title=f"about {query} here")
        TicketFactory(project=project, title="about 1000 snakeXcase C:temp here")
        assert found(client_for(viewer), project, q=query) == [hit.id]


class TestReference:
    @pytest.fixture
    def numbered(self, project):
        """Tickets APL-1 … APL-12."""
        tickets = [TicketFactory(project=project, title="Numbered") for _ in range(12)]
        return {ticket.number: ticket for ticket in tickets}

    @pytest.mark.parametrize("query", ["7", "APL-7", "apl-7"])
    def test_a_number_or_prefix_ref_finds_that_ticket_first(self, client_for, project, viewer, numbered, query):
        text_hit = TicketFactory(project=project, title=f"mentions {query}")
        updated(numbered[7], minutes_ago=60)
        body = search(client_for(viewer), project, q=query).json()
        assert [t["id"] for t in body["tickets"]] == [numbered[7].id, text_hit.id]
        assert body["tickets"][0]["matches"] == []  # found by its number, not by a text

    def test_another_prefix_is_only_text(self, client_for, project, viewer, numbered):
        assert found(client_for(viewer), project, q="OPS-7") == []

    def test_the_filters_still_apply(self, client_for, project, viewer, numbered):
        Ticket.objects.filter(pk=numbered[7].pk).update(archived_at=timezone.now())
        api = client_for(viewer)
        assert found(api, project, q="7") == []
        assert found(api, project, q="APL-7", archived=1) == [numbered[7].id]
        assert found(api, project, q="APL-7", archived=1, **{"status[]": "done"}) == []


class TestOrder:
    def test_title_hits_first_then_most_recently_updated(self, client_for, project, viewer):
        old_title = TicketFactory(project=project, title="Search is slow")
        new_title = TicketFactory(project=project, title="search box")
        old_body = TicketFactory(project=project, description="search")
        new_body = TicketFactory(project=project)
        Comment.objects.create(ticket=new_body, author=viewer, message="search")
        for ticket, minutes in ((old_title, 50), (new_title, 40), (old_body, 30), (new_body, 1)):
            updated(ticket, minutes)
        assert found(client_for(viewer), project, q="search") == [new_title.id, old_title.id, new_body.id,
                                                                  old_body.id]

    def test_without_title_in_fields_recency_alone(self, client_for, project, viewer):
        titled = TicketFactory(project=project, title="cache", description="cache")
        other = TicketFactory(project=project, description="cache")
        updated(titled, 10)
        updated(other, 1)
        assert found(client_for(viewer), project, q="cache", **{"in[]": "description"}) == [other.id, titled.id]

    def test_at_most_a_hundred_with_the_full_total(self, client_for, project, viewer):
        Ticket.objects.bulk_create(
            Ticket(project=project, number=n, title=f"Bulk {n}", status=status_of(project, "todo"),
                   created_by=viewer) for n in range(1, 106))
        body = search(client_for(viewer), project, q="bulk").json()
        assert (len(body["tickets"]), body["total"], body["limit"]) == (100, 105, 100)


class TestCappedTotal:
    @pytest.fixture
    def many(self, project, viewer):
        """Matches in titles, descriptions and comments, with updates in a known order."""
        tickets = []
        for n in range(12):
            ticket = TicketFactory(project=project, title=f"Gadget {n}" if n % 3 == 0 else f"Other {n}",
                                   description="a gadget inside" if n % 3 == 1 else "")
            if n % 3 == 2:
                Comment.objects.create(ticket=ticket, author=viewer, message="gadget comment")
            updated(ticket, minutes_ago=(n * 7) % 12)
            tickets.append(ticket)
        TicketFactory(project=project, title="Unrelated")
        return tickets

    def test_small_counts_are_exact(self, client_for, project, viewer, many):
        body = search(client_for(viewer), project, q="gadget").json()
        assert (body["total"], body["total_capped"], len(body["tickets"])) == (12, False, 12)

    @pytest.mark.parametrize("params", [{"q": "gadget"}, {"q": "gadget", "in[]": ["description", "comments"]},
                                        {"q": "4"}, {"q": "gadget", "in[]": "title"}])
    def test_beyond_the_cap_the_same_page_and_a_lower_bound(self, client_for, project, viewer, many, monkeypatch,
                                                             settings, params):
        import tickets.search

        api = client_for(viewer)
        exact = search(api, project, **params).json()
        monkeypatch.setattr(tickets.search, "TOTAL_CAP", 2)
        monkeypatch.setattr(tickets.search, "SEARCH_LIMIT", 5)
        capped = search(api, project, **params).json()
        monkeypatch.setattr(tickets.search, "TOTAL_CAP", 1000)
        limited = search(api, project, **params).json()
        assert [t["id"] for t in capped["tickets"]] == [t["id"] for t in limited["tickets"]]
        assert [t["id"] for t in limited["tickets"]] == [t["id"] for t in exact["tickets"]][:5]
        assert capped["tickets"] == limited["tickets"]
        if exact["total"] > 2:
            assert capped["total_capped"] is True
            assert 2 < capped["total"] <= exact["total"]


    @pytest.mark.parametrize("beyond", ["title", "comments"])
    def test_one_field_beyond_the_cap_beside_others_read_in_full(self, client_for, project, viewer, many,
                                                                monkeypatch, beyond):
        import tickets.search

        for n in range(3):
            ticket = TicketFactory(project=project, title=f"Gadget {n} more" if beyond == "title" else "More")
            if beyond == "comments":
                Comment.objects.create(ticket=ticket, author=viewer, message="gadget again")
        api = client_for(viewer)
        exact = search(api, project, q="gadget").json()
        monkeypatch.setattr(tickets.search, "TOTAL_CAP", 5)
        capped = search(api, project, q="gadget").json()
        assert (capped["total_capped"], exact["total_capped"]) == (True, False)
        assert capped["tickets"] == exact["tickets"]


class TestMatches:
    def test_comment_hits_the_latest_three_with_their_authors(self, client_for, project, viewer, editor):
        ticket = TicketFactory(project=project)
        comments = [Comment.objects.create(ticket=ticket, author=editor if n % 2 else viewer, message=f"retry {n}")
                    for n in range(5)]
        Comment.objects.create(ticket=ticket, author=viewer, message="retry deleted", deleted_at=timezone.now())
        [result] = search(client_for(viewer), project, q="retry").json()["tickets"]
        assert result["matches"] == [
            {"field": "comment", "text": f"retry {n}",
             "author": {"id": comments[n].author.id, "name": comments[n].author.name}} for n in (4, 3, 2)]
        assert result["comment_count"] == 5

    def test_a_long_text_is_cut_around_the_hit(self, client_for, project, viewer):
        description = "a" * 100 + " needle " + "b" * 100
        TicketFactory(project=project, description=description)
        [result] = search(client_for(viewer), project, q="NEEDLE").json()["tickets"]
        assert result["matches"] == [{"field": "description", "text": f"…{'a' * 59} needle {'b' * 59}…"}]


@pytest.mark.parametrize(("text", "query", "expected"), [
    ("short text", "text", "short text"),
    ("line one\n\n  line two", "two", "line one line two"),
    ("x" * 70 + "Hit", "hit", "…" + "x" * 60 + "Hit"),
    ("Hit" + "y" * 70, "HIT", "Hit" + "y" * 60 + "…"),
    ("Straße" + "z" * 100, "STRASSE", "Straße" + "z" * 54 + "…"),  # the database matched; Python does not
])
def test_excerpt(text, query, expected):
    assert excerpt(text, query) == expected


class TestValidation:
    @pytest.mark.parametrize(("params", "error", "field"), [
        ({}, "q is required", "q"),
        ({"q": ""}, "q cannot be empty", "q"),
        ({"q": "   "}, "q cannot be empty", "q"),
        ({"q": "x" * 201}, "q: Ensure this field has no more than 200 characters.", "q"),
        ({"q": "x", "in[]": "body"}, 'in[]: "body" is not a valid choice.', "in[]"),
        ({"q": "x", "in[]": ["title", ""]}, 'in[]: "" is not a valid choice.', "in[]"),
        ({"q": "x", "status[]": ["todo", "nope", "gone"]}, "status[]: unknown status gone, nope", "status[]"),
        ({"q": "x", "archived": 2}, "archived: Ensure this value is less than or equal to 1.", "archived"),
        ({"q": "x", "archived": "yes"}, "archived: A valid integer is required.", "archived"),
    ])
    def test_invalid_parameters_are_422(self, client_for, project, viewer, params, error, field):
        response = search(client_for(viewer), project, **params)
        assert (response.status_code, response.json()) == (422, {
            "code": "validation_failed", "error": error, "field": field})

    def test_a_status_of_another_project_is_unknown(self, client_for, project, viewer):
        other = ProjectFactory()
        other.statuses.create(slug="icebox", label="Icebox", category="backlog", sort_order=9)
        response = search(client_for(viewer), project, q="x", **{"status[]": "icebox"})
        assert response.json() == {
            "code": "validation_failed", "error": "status[]: unknown status icebox", "field": "status[]"}


class TestAccess:
    @pytest.mark.parametrize("role", list(Role))
    def test_every_member_searches(self, client_for, project, member_with, role):
        assert search(client_for(member_with(role)), project, q="x").status_code == 200

    def test_non_member_404_and_anonymous_401(self, client_for, anonymous, project, outsider):
        assert search(client_for(outsider), project, q="x").status_code == 404
        assert search(anonymous, project, q="x").status_code == 401


def test_fixed_query_count(client_for, project, editor, django_assert_max_num_queries):
    api = client_for(editor)
    search(api, project, q="warm")  # the token's first use is written once
    tags = [TagFactory(project=project) for _ in range(3)]
    for count in (3, 60):
        for index in range(count):
            ticket = TicketFactory(project=project, title=f"Widget {index}", description="widget docs",
                                   tags=tags[: index % 4])
            for _ in range(4):
                Comment.objects.create(ticket=ticket, author=UserFactory(), message="widget talk")
        # token, membership, statuses, matches, page, its tags, comment hits; SQLite cannot LIMIT inside a
        # UNION and looks each searched field up on its own (two more).
        with django_assert_max_num_queries(7 if connection.vendor == "postgresql" else 9):
            body = search(api, project, q="widget", **{"status[]": "backlog"}).json()
        assert len(body["tickets"]) == body["total"] == len(Ticket.objects.filter(project=project))
        assert all(len(ticket["matches"]) == 5 for ticket in body["tickets"])


@pytest.mark.postgres
@pytest.mark.skipif(connection.vendor != "postgresql", reason="the trigram indexes exist on PostgreSQL only")
@pytest.mark.parametrize(("lookup", "index"), [
    (lambda: Ticket.objects.filter(title__icontains="needle"), "ticket_title_trgm"),
    (lambda: Ticket.objects.filter(description__icontains="needle"), "ticket_description_trgm"),
    (lambda: Comment.objects.filter(message__icontains="needle"), "comment_message_trgm"),
])
def test_the_trigram_indexes_serve_icontains(db, lookup, index):
    """The indexes cover UPPER(column::text), the expression icontains compiles to; should either change,
    the indexes would go unused without any other test failing. Sequential scans are off, as the
    planner would leave them for a rare word in a big table."""
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
    assert f"Bitmap Index Scan on {index}" in lookup().explain()


def test_a_capped_total_is_the_same_for_the_same_data(client_for, project, viewer, monkeypatch):
    """Beyond the cap, each field counts its TOTAL_CAP + 1 matches of lowest id: whatever order the database
    scans in, the same search of the same data gives the same total."""
    import tickets.search

    monkeypatch.setattr(tickets.search, "TOTAL_CAP", 2)
    monkeypatch.setattr(tickets.search, "_probes", {})  # compiled with the cap of their first use
    by_title = [TicketFactory(project=project, title=f"widget {n}") for n in range(4)]
    by_description = [TicketFactory(project=project, description="a widget") for _ in range(4)]
    for ticket in [*by_title[2:], *by_description[:2], by_description[3]]:
        Comment.objects.create(ticket=ticket, author=viewer, message="widget again")
    api = client_for(viewer)
    answers = [search(api, project, q="widget").json() for _ in range(3)]
    counted = {*by_title[:3], *by_description[:3], by_title[2], by_title[3], by_description[0]}
    assert {(answer["total"], answer["total_capped"]) for answer in answers} == {(len(counted), True)}
