"""Prepared queries: compiled once, and giving what the ORM gives for the same queryset."""

import orjson
import pytest
from django.db import connection
from django.db.models import IntegerField, OuterRef, Q
from django.db.models.functions import Cast

from accounts.models import ApiToken
from accounts.services import issue_token
from core.lookups import any_of
from core.queries import PreparedLookup, PreparedRows, rows_of, rows_together
from projects.models import Status
from tests.factories import BlockerFactory, ChecklistItemFactory, CommentFactory, TicketFactory
from tickets.models import ChecklistItem, Ticket


def field_values(instance) -> dict:
    return {field.attname: getattr(instance, field.attname) for field in type(instance)._meta.concrete_fields}


def test_rows_are_what_values_list_gives_with_the_converters_applied(project):
    ticket = TicketFactory(project=project)
    for done in (True, False):
        ChecklistItemFactory(ticket=ticket, done=done)
    CommentFactory(ticket=ticket)

    def items(ticket):
        return (ChecklistItem.objects.filter(ticket_id=ticket).order_by("id")
                .values_list("id", "done", "ticket__created_at", "ticket__estimated_hours"))

    prepared = PreparedRows(items)
    rows = prepared(ticket=ticket.pk)
    assert rows == list(items(ticket.pk))
    assert [type(done) for _, done, _, _ in rows] == [bool, bool]  # SQLite stores 1 and 0
    assert rows[0][2] == ticket.created_at  # an aware datetime, as the ORM gives it


def test_the_queryset_is_built_and_compiled_once(project, django_assert_num_queries):
    first, second = TicketFactory(project=project), TicketFactory(project=project)
    built = []

    def titles(project, number):
        built.append((project, number))
        return Ticket.objects.filter(project_id=project, number=number).values_list("title")

    prepared = PreparedRows(titles)
    with django_assert_num_queries(2):
        found = [prepared(project=project.pk, number=ticket.number) for ticket in (first, second)]
    assert found == [[(first.title,)], [(second.title,)]]
    assert len(built) == 1
    assert prepared(project=project.pk, number=10**6) == []


@pytest.mark.parametrize("build", [
    lambda ticket: Ticket.objects.values_list("id"),  # the argument is not used
    lambda ticket: Ticket.objects.filter(title=f"#{ticket}").values_list("id"),  # not as itself
])
def test_an_argument_must_reach_the_sql_as_itself(build, db):
    with pytest.raises(ValueError, match="each argument must reach the SQL"):
        PreparedRows(build)(ticket=1)


def test_a_lookup_gives_the_instance_and_its_related_ones_as_select_related_does(manager):
    token, _ = issue_token(user=manager, label="laptop")
    lookup = PreparedLookup(ApiToken, lambda tokens, digest: tokens.filter(digest=digest), related=("user",))

    found = lookup(digest=token.digest)
    expected = ApiToken.objects.select_related("user").get(pk=token.pk)
    assert field_values(found) == field_values(expected)
    assert field_values(found.user) == field_values(expected.user)
    assert not found._state.adding and found._state.db == "default"
    assert lookup(digest="0" * 64) is None


def test_a_lookup_by_order_gives_the_first_row_as_first_does(project):
    statuses = project.statuses.all()
    lookup = PreparedLookup(Status, lambda statuses, project: statuses.filter(project_id=project),
                            first_by=("sort_order", "id"))
    statuses.update(sort_order=5)  # a tie: the lowest id
    statuses.filter(slug="done").update(sort_order=1)
    for expected_slug in ("done", "todo"):
        found = lookup(project=project.pk)
        assert field_values(found) == field_values(statuses.order_by("sort_order", "id").first())
        assert found.slug == expected_slug
        statuses.filter(slug="todo").update(sort_order=0)
    assert lookup(project=10**6) is None


def test_a_found_instance_reads_and_saves_like_any_other(manager, django_assert_num_queries):
    token, _ = issue_token(user=manager)
    found = PreparedLookup(ApiToken, lambda tokens, pk: tokens.filter(pk=pk), related=("user",))(pk=token.pk)
    with django_assert_num_queries(0):
        assert found.user.username == manager.username
    found.label = "renamed"
    found.save(update_fields=["label"])
    assert ApiToken.objects.get(pk=token.pk).label == "renamed"


def test_a_list_argument_goes_through_any_of_whatever_its_length(project):
    tickets = TicketFactory.create_batch(3, project=project)
    numbers = PreparedRows(lambda tickets: Ticket.objects.filter(any_of("pk", tickets)).order_by("number")
                           .values_list("number"))
    for ids in ([], [tickets[1].pk], [ticket.pk for ticket in tickets] + [10**9]):
        assert [number for (number,) in numbers(tickets=ids)] == sorted(
            Ticket.objects.filter(pk__in=ids).values_list("number", flat=True))


def test_an_argument_may_reach_the_sql_more_than_once(project):
    first, second = TicketFactory(project=project), TicketFactory(project=project)
    prepared = PreparedRows(lambda ticket: Ticket.objects.filter(Q(pk=ticket) | Q(blocked_by_links__blocker_id=ticket))
                            .order_by("pk").values_list("pk"))
    BlockerFactory(ticket=second, blocker=first)
    assert prepared(ticket=first.pk) == [(first.pk,), (second.pk,)]
    assert prepared(ticket=second.pk) == [(second.pk,)]


def test_rows_together_are_each_query_s_rows(project, django_assert_num_queries):
    ticket = TicketFactory(project=project)
    ChecklistItemFactory(ticket=ticket, done=True)
    numbers = PreparedRows(lambda ticket: Ticket.objects.filter(pk=ticket).values_list("number"))
    items = PreparedRows(lambda ticket: ChecklistItem.objects.filter(ticket_id=ticket).values_list("done"))
    with django_assert_num_queries(3):
        found = rows_together((numbers, {"ticket": ticket.pk}), (items, {"ticket": ticket.pk}),
                              (numbers, {"ticket": 10**6}))
    assert found == [[(ticket.number,)], [(True,)], []]


@pytest.mark.direct_postgres
@pytest.mark.skipif(connection.vendor != "postgresql", reason="prepared statements and pipelines: PostgreSQL")
def test_on_postgresql_they_are_prepared_statements_sent_in_one_round_trip(project, pipelines):
    ticket = TicketFactory(project=project)
    items = PreparedRows(lambda ticket: ChecklistItem.objects.filter(ticket_id=ticket).values_list("done"))
    titles = PreparedRows(lambda ticket: Ticket.objects.filter(pk=ticket).values_list("title"))
    for _ in range(2):  # prepared from the second run on (settings: prepare_threshold)
        assert rows_together((items, {"ticket": ticket.pk}), (titles, {"ticket": ticket.pk})) == [[], [(ticket.title,)]]
    assert len(pipelines) == 2
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        prepared = " ".join(statement for (statement,) in cursor.fetchall())
    assert '"tickets_checklistitem"."done"' in prepared and '"tickets_ticket"."title"' in prepared


def test_rows_of_gives_a_subquery_s_rows_as_json_in_their_order(project):
    busy, idle = TicketFactory(project=project), TicketFactory(project=project)
    for sort_order, text, done in [(2, 'b "quoted" \\ ✓', False), (1, "a\nline", True), (2, "c", None)]:
        ChecklistItemFactory(ticket=busy, sort_order=sort_order, text=text, done=bool(done))
    items = rows_of(ChecklistItem.objects.filter(ticket=OuterRef("pk")), ordering=("sort_order", "id"),
                    position="sort_order", label="text", done=Cast("done", IntegerField()))
    found = dict(Ticket.objects.filter(pk__in=[busy.pk, idle.pk]).values_list("pk", items))
    assert {pk: orjson.loads(text) for pk, text in found.items()} == {
        busy.pk: [{"position": 1, "label": "a\nline", "done": 1}, {"position": 2, "label": 'b "quoted" \\ ✓', "done": 0},
                  {"position": 2, "label": "c", "done": 0}], idle.pk: []}


def test_rows_of_refuses_a_name_it_could_not_write_into_sql(project):
    with pytest.raises(ValueError, match="column names"):
        rows_of(ChecklistItem.objects.filter(ticket=OuterRef("pk")), ordering=("id",), **{"it's": "text"})
