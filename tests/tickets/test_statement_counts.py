"""The statements each kind of request sends to PostgreSQL, BEGIN, COMMIT and savepoints included, pinned at
what the one-read write path costs (issue 31's goals in brackets). A write reads its ticket once, under its
lock, with the caller's membership in the same round trip (tickets/state.py), and derives its frame, event,
notifications and ETag from that read; a move takes the project's lock and its frame's number in one UPDATE,
other writes number and keep their frames in one statement (events/publish.py).

The ticket is a realistic one: a tag, an assignee who is told of moves and comments, created by someone else
than the caller; each kind is sent twice before it is counted (a token's first use of the minute is recorded,
statements are prepared on their connection)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from projects.roles import Role
from tests.factories import MembershipFactory, TagFactory, TicketFactory

from .conftest import status_of, ticket_url

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's statements"),
    pytest.mark.django_db(transaction=True),  # BEGIN and COMMIT as the server sends them, not savepoints
]


@pytest.fixture
def setting(client_for, project, manager, editor):
    """The caller (an editor), a ticket of the manager's with a tag and an assignee, and a ticket of the todo
    column to move next to."""
    assignee = MembershipFactory(project=project, role=Role.EDITOR).user
    ticket = TicketFactory(project=project, created_by=manager, tags=[TagFactory(project=project)],
                           assignees=[assignee])
    neighbour = TicketFactory(project=project, created_by=manager, status=status_of(project, "todo"))
    return client_for(editor), ticket, neighbour, assignee


def statements(send) -> list[str]:
    """What the third of three requests of a kind sends (send(n) makes the n-th), each answer a success."""
    for attempt in range(2):
        assert send(attempt).status_code < 300
    with CaptureQueriesContext(connection) as sent:
        assert send(2).status_code < 300
    return [str(query["sql"]) for query in sent.captured_queries]


def test_a_move_to_another_column(setting):  # [≤ 13]
    api, ticket, _, _ = setting
    sent = statements(lambda n: api.post(ticket_url(ticket, "move"), {"status": ["todo", "review", "done"][n]}))
    # token; BEGIN; membership and the ticket's state (one round trip); the status; the project's lock and the
    # frame's number, then the column's end (one round trip); the ticket; its history; the event; the
    # followers told (who is a member, with their unread counts), their notifications; COMMIT
    assert len(sent) == 13, sent
    assert (sent[1], sent[-1]) == ("BEGIN", "COMMIT")


@pytest.mark.direct_postgres
def test_a_move_to_the_end_of_another_column_reads_that_end_with_the_lock(setting, pipelines):
    api, ticket, _, _ = setting
    statements(lambda n: api.post(ticket_url(ticket, "move"), {"status": ["todo", "review", "done"][n]}))
    assert pipelines[-2:] == [2, 2]  # the membership with the ticket's state; the lock with the column's end


def test_a_relative_move_into_another_column(setting):  # [≤ 15]
    api, ticket, neighbour, _ = setting
    columns = ["review", "todo", "done"]
    for n in range(2):
        TicketFactory(project=ticket.project, status=status_of(ticket.project, columns[n]))
    target = TicketFactory(project=ticket.project, status=status_of(ticket.project, "done"))
    anchors = [None, neighbour, target]
    sent = statements(lambda n: api.post(ticket_url(ticket, "move"), {"status": columns[n]} if anchors[n] is None
                                         else {"status": columns[n], "before_id": anchors[n].pk}))
    # as a move, the anchor and its neighbour (one statement) in place of the column's end
    assert len(sent) == 13, sent


def test_a_relative_move_within_its_column(setting):
    api, ticket, neighbour, _ = setting
    api.post(ticket_url(ticket, "move"), {"status": "todo"})
    sent = statements(lambda n: api.post(ticket_url(ticket, "move"), {"status": "todo", ["before_id", "after_id"][
        n % 2]: neighbour.pk}))
    assert len(sent) == 11, sent  # nobody is told of a reorder


@pytest.mark.direct_postgres
def test_a_relative_move_reads_its_anchor_and_neighbour_with_the_lock(setting, pipelines):
    api, ticket, neighbour, _ = setting
    api.post(ticket_url(ticket, "move"), {"status": "todo"})
    statements(lambda n: api.post(ticket_url(ticket, "move"), {"status": "todo", ["before_id", "after_id"][
        n % 2]: neighbour.pk}))
    assert pipelines[-2:] == [2, 2]  # the membership with the ticket's state; the lock with the anchor's read


def test_an_update_of_the_title(setting):  # [≤ 12]
    api, ticket, _, _ = setting
    sent = statements(lambda n: api.post(ticket_url(ticket, "update"), {"title": f"Title {n}"}))
    # token; BEGIN; membership and the ticket's state (one round trip); the ticket; its history; the event,
    # numbered in the same statement; COMMIT
    assert len(sent) == 8, sent


def test_an_update_with_if_match_answers_the_etag_without_reading_again(setting):
    api, ticket, _, _ = setting
    sent = statements(lambda n: api.post(ticket_url(ticket, "update"), {"title": f"Title {n}"},
                                         HTTP_IF_MATCH=api.get(ticket_url(ticket))["ETag"]))
    assert len(sent) == 4 + 8, sent  # the update's, and the detail's GET before it


def test_a_comment(setting):  # [≤ 12]
    api, ticket, _, _ = setting
    sent = statements(lambda n: api.post(ticket_url(ticket, "comments"), {"comment": f"Comment {n}"}))
    # token; BEGIN; membership and state; the comment; the ticket; its history; the card's and the comment's
    # events; the followers told, their notifications; COMMIT
    assert len(sent) == 11, sent


def test_an_assignment(setting, project):  # [≤ 12]
    api, ticket, _, _ = setting
    members = [MembershipFactory(project=project, role=Role.VIEWER).user for _ in range(3)]
    sent = statements(lambda n: api.post(ticket_url(ticket, "assign"), {"user_id": members[n].pk}))
    # token; BEGIN; membership and state; the member assigned; the link; the ticket; its history; the event;
    # the member told (with their unread count), their notification; COMMIT
    assert len(sent) == 12, sent


def test_a_creation(setting, project):  # [≤ 11]
    api, _, _, _ = setting
    sent = statements(lambda n: api.post(f"/api/v1/projects/{project.pk}/tickets", {"title": f"New {n}"}))
    # token; membership and the first status (one round trip); BEGIN; the number and the frame's seq, then the
    # column's end (one round trip); the ticket; its history; the event; COMMIT
    assert len(sent) == 10, sent


@pytest.mark.direct_postgres
def test_a_creation_holds_the_projects_lock_for_one_round_trip_fewer(setting, project, pipelines):
    """The column's end rides with the UPDATE that takes the lock, as the first status with the membership."""
    api, _, _, _ = setting
    statements(lambda n: api.post(f"/api/v1/projects/{project.pk}/tickets", {"title": f"New {n}"}))
    assert pipelines[-2:] == [2, 2]


def test_a_board(setting, project):  # [≤ 10]
    api, _, _, _ = setting
    sent = statements(lambda n: api.get(f"/api/v1/projects/{project.pk}/board"))
    # token; membership; statuses; tags; members; velocity; the cards; their tags; their assignees
    assert len(sent) == 9, sent


def test_a_ticket_detail(setting):  # [≤ 5]
    api, ticket, _, _ = setting
    sent = statements(lambda n: api.get(ticket_url(ticket)))
    assert len(sent) == 4, sent  # token; membership, the ticket and its parts (one round trip)
