"""any_of(): `__in` with the list as one parameter."""

from core.lookups import any_of
from tests.factories import TicketFactory
from tickets.models import Ticket


def test_any_of_finds_what_in_finds(project):
    tickets = TicketFactory.create_batch(4, project=project)
    for ids in ([], [tickets[0].pk], [tickets[1].pk, tickets[3].pk, 10**9], [ticket.pk for ticket in tickets] * 2):
        assert (sorted(Ticket.objects.filter(any_of("pk", ids)).values_list("pk", flat=True))
                == sorted(Ticket.objects.filter(pk__in=ids).values_list("pk", flat=True)))


def test_the_sql_is_the_same_whatever_the_length_of_the_list(db):
    (short, short_params), (long, long_params) = (
        Ticket.objects.filter(any_of("pk", ids)).query.sql_with_params() for ids in ([1], list(range(100))))
    assert short == long
    assert (len(short_params), len(long_params)) == (1, 1)
