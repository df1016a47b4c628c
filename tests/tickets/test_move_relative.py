"""Relative moves: a ticket lands right before or after another of the target column, in a fixed number of
queries whatever the column's size; a move within the column reorders it."""

import threading

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from notifications.models import Notification
from projects.models import Project, ProjectQuerySet
from projects.roles import Role
from tests.factories import ProjectFactory, TicketFactory
from tickets import history, services
from tickets.models import Activity, Ticket
from tickets.services import positions
from tickets.services.positions import GAP

from .conftest import status_of, ticket_url


def move(client, ticket, **body):
    return client.post(ticket_url(ticket, "move"), body)


def column_order(project, slug) -> list[int]:
    return list(Ticket.objects.active().filter(project=project, status__slug=slug).order_by("sort_order", "id")
                .values_list("pk", flat=True))


@pytest.fixture
def todo(project):
    """Three tickets in the todo column, GAP apart: a, b, c."""
    return [TicketFactory(project=project, status=status_of(project, "todo"), sort_order=index * GAP)
            for index in range(3)]


@pytest.mark.parametrize(("where", "expected"), [
    ({"before_id": 0}, ["moved", 0, 1, 2]), ({"before_id": 1}, [0, "moved", 1, 2]),
    ({"after_id": 1}, [0, 1, "moved", 2]), ({"after_id": 2}, [0, 1, 2, "moved"]),
], ids=["before the first", "before the second", "after the second", "after the last"])
def test_lands_where_it_is_dropped_in_another_column(client_for, editor, ticket, project, todo, board_listener,
                                                     django_capture_on_commit_callbacks, where, expected):
    anchor = {key: todo[index].pk for key, index in where.items()}
    with django_capture_on_commit_callbacks(execute=True):
        response = move(client_for(editor), ticket, status="todo", **anchor)
    assert (response.status_code, response.json()) == (200, {"ok": True})
    assert column_order(project, "todo") == [ticket.pk if item == "moved" else todo[item].pk for item in expected]
    [frame] = board_listener.frames()
    after = expected[expected.index("moved") + 1:]
    assert (frame["event"], frame["from_status"], frame["to_status"], frame["ticket"]["id"], frame["before_id"]) == (
        "ticket.moved", "backlog", "todo", ticket.pk, todo[after[0]].pk if after else None)


def test_a_move_to_the_end_says_so_in_its_frame(client_for, editor, ticket, todo, board_listener,
                                                django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        move(client_for(editor), ticket, status="todo")
    [frame] = board_listener.frames()
    assert (frame["event"], frame["before_id"]) == ("ticket.moved", None)


def test_a_move_within_the_column_reorders_it(client_for, editor, manager, project, todo, board_listener,
                                              django_capture_on_commit_callbacks):
    last = todo[2]
    with django_capture_on_commit_callbacks(execute=True):
        response = move(client_for(editor), last, status="todo", before_id=todo[0].pk)
    assert response.status_code == 200
    assert column_order(project, "todo") == [last.pk, todo[0].pk, todo[1].pk]
    [frame] = board_listener.frames()
    assert (frame["event"], frame["from_status"], frame["to_status"], frame["before_id"]) == (
        "ticket.moved", "todo", "todo", todo[0].pk)
    activity = Activity.objects.get(ticket=last)
    assert (activity.action, list(activity.changes)) == ("moved", ["sort_order"])
    assert not Notification.objects.exists()  # its status did not change: nobody is told


def test_a_ticket_already_in_place_changes_nothing(client_for, editor, todo, board_listener,
                                                   django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = move(client_for(editor), todo[1], status="todo", after_id=todo[0].pk)
    assert response.status_code == 200
    assert Ticket.objects.get(pk=todo[1].pk).sort_order == GAP
    assert (board_listener.frames(), Activity.objects.count()) == ([], 0)


def test_neighbours_with_no_room_between_them_space_the_column_out(client_for, editor, ticket, project):
    tight = [TicketFactory(project=project, status=status_of(project, "todo"), sort_order=order)
             for order in (5, 6, 6, 7)]
    response = move(client_for(editor), ticket, status="todo", after_id=tight[1].pk)
    assert response.status_code == 200
    assert column_order(project, "todo") == [tight[0].pk, tight[1].pk, ticket.pk, tight[2].pk, tight[3].pk]
    orders = list(Ticket.objects.filter(pk__in=[t.pk for t in tight]).order_by("sort_order")
                  .values_list("sort_order", flat=True))
    assert orders == [0, GAP, 2 * GAP, 3 * GAP]


@pytest.mark.parametrize(("body", "message", "field"), [
    ({"before_id": "first", "after_id": "second"}, "before_id: give before_id or after_id, not both", "before_id"),
    ({"before_id": "self"}, "before_id: a ticket cannot be placed next to itself", "before_id"),
    ({"after_id": "other column"}, "after_id: not a ticket of the todo column", "after_id"),
    ({"before_id": "archived"}, "before_id: not a ticket of the todo column", "before_id"),
    ({"before_id": "deleted"}, "before_id: not a ticket of the todo column", "before_id"),
    ({"before_id": "other project"}, "before_id: not a ticket of the todo column", "before_id"),
    ({"before_id": "missing"}, "before_id: not a ticket of the todo column", "before_id"),
    ({"before_id": "text"}, "before_id: A valid integer is required.", "before_id"),
    ({"after_id": 0}, "after_id: Ensure this value is greater than or equal to 1.", "after_id"),
])
def test_a_bad_anchor_is_refused_and_changes_nothing(client_for, editor, ticket, project, todo, board_listener,
                                                     django_capture_on_commit_callbacks, body, message, field):
    anchors = {
        "first": todo[0].pk, "second": todo[1].pk, "self": ticket.pk, "missing": 10**9, "text": "two",
        "other column": TicketFactory(project=project, status=status_of(project, "review")).pk,
        "archived": TicketFactory(project=project, status=status_of(project, "todo"), archived_at=timezone.now()).pk,
        "deleted": TicketFactory(project=project, status=status_of(project, "todo"), deleted_at=timezone.now()).pk,
        "other project": TicketFactory().pk,
    }
    with django_capture_on_commit_callbacks(execute=True):
        response = move(client_for(editor), ticket, status="todo",
                        **{key: anchors.get(value, value) for key, value in body.items()})
    assert (response.status_code, response.json()) == (422, {
        "code": "validation_failed", "error": message, "field": field})
    ticket.refresh_from_db()
    assert (ticket.status.slug, board_listener.frames(), Activity.objects.filter(ticket=ticket).count()) == (
        "backlog", [], 0)


@pytest.mark.parametrize("role", [Role.VIEWER, Role.CONTRIBUTOR])
def test_roles_below_editor_may_not_reorder(client_for, member_with, project, todo, role):
    response = move(client_for(member_with(role)), todo[2], status="todo", before_id=todo[0].pk)
    assert response.status_code == 403
    assert column_order(project, "todo") == [ticket.pk for ticket in todo]


def column_of(project, size: int) -> list[Ticket]:
    """`size` tickets in the todo column, GAP apart, made in one statement."""
    todo, start = status_of(project, "todo"), Project.objects.advance_counters(project.pk, last_ticket_number=size)
    first_number = start["last_ticket_number"] - size + 1
    return Ticket.objects.bulk_create(
        Ticket(project=project, number=first_number + index, title=f"T{index}", status=todo, created_by=project.owner,
               sort_order=index * GAP) for index in range(size))


def queries_of_a_move_into_the_middle(api, ticket, column: list[Ticket]) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert move(api, ticket, status="todo", before_id=column[len(column) // 2].pk).status_code == 200
    return len(captured.captured_queries)


def test_a_relative_move_costs_the_same_in_a_column_of_20_and_of_2000(client_for, editor, project):
    api = client_for(editor)
    api.get(ticket_url(TicketFactory(project=project)))  # the token's first use is recorded: not a move's cost
    small = column_of(project, 20)
    counts = [queries_of_a_move_into_the_middle(api, TicketFactory(project=project), small)]
    Ticket.objects.filter(pk__in=[t.pk for t in small]).update(deleted_at=timezone.now())
    large = column_of(project, 2000)
    counts.append(queries_of_a_move_into_the_middle(api, TicketFactory(project=project), large))
    assert counts[0] == counts[1]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL's row locks and real threads")
@pytest.mark.parametrize("through", ["service", "api"])
def test_a_move_that_spaces_the_column_out_and_an_update_of_its_neighbour_both_succeed(monkeypatch, client_for,
                                                                                          through):
    """The update holds its ticket and waits for the project while the move holds the project: a move that
    then wrote the column's other tickets would wait for the update, and PostgreSQL would abort one of them.
    The move gives way and starts again, locking the column first: within the service, or (through the API,
    whose view locked the ticket as it loaded it) as the view runs the request again."""
    project = ProjectFactory()
    api = client_for(project.owner)
    todo = status_of(project, "todo")
    moving = TicketFactory(project=project)
    tight = [TicketFactory(project=project, status=todo, sort_order=order) for order in (5, 6, 6, 7)]
    neighbour_locked, move_holds_project = threading.Event(), threading.Event()
    record, advance = history.record, ProjectQuerySet.advance_counters_then

    def recording(**kwargs):  # the update, its ticket locked, on its way to the project
        if threading.current_thread().name == "update":
            neighbour_locked.set()
            assert move_holds_project.wait(timeout=5), "the move never took the project's lock"
        return record(**kwargs)

    def locking(self, project_id, *reads, **steps):  # the move takes the project's lock with its frame's number
        taken = advance(self, project_id, *reads, **steps)
        if threading.current_thread().name == "move":
            move_holds_project.set()
        return taken

    monkeypatch.setattr(history, "record", recording)
    monkeypatch.setattr(ProjectQuerySet, "advance_counters_then", locking)
    columns_locked_first, lock_column = [], positions.lock_column

    def locking_the_column(status, **kwargs):
        columns_locked_first.append(status.slug)
        return lock_column(status, **kwargs)

    monkeypatch.setattr(positions, "lock_column", locking_the_column)

    def update():
        services.update_ticket(ticket=tight[2], actor=project.owner, title="Renamed meanwhile")

    def move():
        assert neighbour_locked.wait(timeout=5), "the update never locked its ticket"
        if through == "service":
            services.move_ticket(ticket=moving, status=todo, actor=project.owner, after_id=tight[1].pk)
        else:
            response = api.post(ticket_url(moving, "move"), {"status": "todo", "after_id": tight[1].pk})
            assert response.status_code == 200, response.content

    outcomes = {}

    def run(work):
        try:
            work()
            outcomes[work.__name__] = "done"
        except Exception as error:
            outcomes[work.__name__] = repr(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=[work], name=work.__name__) for work in (update, move)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert outcomes == {"update": "done", "move": "done"}
    assert columns_locked_first == ["todo"]  # the move gave way once, then locked the column first
    assert column_order(project, "todo") == [tight[0].pk, tight[1].pk, moving.pk, tight[2].pk, tight[3].pk]
    assert Ticket.objects.get(pk=tight[2].pk).title == "Renamed meanwhile"
