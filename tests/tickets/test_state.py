"""A write's one read of its ticket (tickets/state.py): what it holds is what the ticket is, even when another
write committed while it waited for the lock."""

import threading

import pytest
from django.db import connection, transaction

from tests.factories import MembershipFactory, TagFactory, TicketFactory
from tests.polling import eventually
from tickets import services
from tickets.models import Ticket
from tickets.state import lock_state

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL's row locks and real threads"),
    pytest.mark.django_db(transaction=True),
]


def waiting_for_a_lock() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = "
                       "current_database()")
        return cursor.fetchone()[0] > 0


def test_a_write_that_waited_for_the_lock_holds_what_the_write_before_it_committed(project, manager):
    ticket = TicketFactory(project=project, created_by=manager)
    assignee, tag = MembershipFactory(project=project).user, TagFactory(project=project)
    first_holds, first_may_commit, held = threading.Event(), threading.Event(), {}

    def first():
        try:
            with transaction.atomic():
                state = lock_state(Ticket.objects.get(pk=ticket.pk))
                services.assign_user(ticket=state, user=assignee, actor=manager)
                services.update_ticket(ticket=state, actor=manager, title="Renamed", tags=[tag])
                first_holds.set()
                first_may_commit.wait(timeout=10)
        finally:
            connection.close()

    def second():
        try:
            with transaction.atomic():
                held["state"] = lock_state(Ticket.objects.get(pk=ticket.pk))
        finally:
            connection.close()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    threads[0].start()
    assert first_holds.wait(timeout=10)
    threads[1].start()
    assert eventually(waiting_for_a_lock)  # the second read started before the first write committed
    first_may_commit.set()
    for thread in threads:
        thread.join(timeout=30)

    state = held["state"]
    assert (state.ticket.title, state.ticket.version) == ("Renamed", ticket.version + 2)
    assert ([user.pk for user in state.assignees], [t.pk for t in state.tags]) == ([assignee.pk], [tag.pk])


def test_the_state_is_the_ticket_as_read_afresh(project, manager):
    tags = [TagFactory(project=project, sort_order=order) for order in (2, 1)]
    assignees = [MembershipFactory(project=project).user for _ in range(2)]
    ticket = TicketFactory(project=project, created_by=manager, tags=tags, assignees=assignees)
    with transaction.atomic():
        state = lock_state(Ticket.objects.get(pk=ticket.pk))
    assert state.ticket.status.slug == "backlog"
    assert [tag.pk for tag in state.tags] == [tags[1].pk, tags[0].pk]  # in the board's order
    assert [user.pk for user in state.assignees] == sorted(user.pk for user in assignees)
    assert (state.creator.pk, state.creator.display_name) == (manager.pk, manager.display_name)
    assert (state.reaction_count, state.checklist_total, state.checklist_done) == (0, 0, 0)
