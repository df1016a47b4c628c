"""Blockers: add (same project, not itself, no cycle, idempotent) and remove; both answer the new list."""

from concurrent.futures import ThreadPoolExecutor
from itertools import pairwise
from threading import Barrier

import pytest
from django.db import connection
from django.utils import timezone

from core.api.exceptions import RuleViolation
from projects.roles import Role
from tests.factories import ProjectFactory, TicketFactory
from tickets import services
from tickets.models import Activity, Blocker

from .conftest import status_of, ticket_url

EDITOR_LADDER = [(Role.VIEWER, 403), (Role.CONTRIBUTOR, 403), (Role.EDITOR, None), (Role.DEVELOPER, None),
                 (Role.MANAGER, None)]


def add_url(ticket) -> str:
    return f"/api/v1/tickets/{ticket.id}/blockers"


def remove_url(ticket, blocker) -> str:
    return f"/api/v1/tickets/{ticket.id}/blockers/{blocker.id}/delete"


def entry(ticket) -> dict:
    return {"id": ticket.id, "title": ticket.title, "status": ticket.status.slug,
            "project_ticket_number": ticket.number}


def links() -> set[tuple[int, int]]:
    return set(Blocker.objects.values_list("blocker_id", "ticket_id"))


@pytest.fixture
def chain(project):
    """Four tickets A, B, C, D of the project, none linked yet."""
    return [TicketFactory(project=project, title=title) for title in "ABCD"]


def block(blocker, ticket):
    Blocker.objects.create(ticket=ticket, blocker=blocker)


class TestAdd:
    def test_adds_and_answers_the_list_by_number(self, client_for, editor, project, ticket, board_listener,
                                                 django_capture_on_commit_callbacks):
        first = TicketFactory(project=project, title="Schema", status=status_of(project, "todo"))
        second = TicketFactory(project=project, title="API")
        block(second, ticket)
        api = client_for(editor)
        with django_capture_on_commit_callbacks(execute=True):
            response = api.post(add_url(ticket), {"blocker_ticket_id": first.id})

        assert (response.status_code, response.json()) == (201, {"ok": True, "blockers": [entry(first),
                                                                                          entry(second)]})
        assert links() == {(first.id, ticket.id), (second.id, ticket.id)}
        assert api.get(ticket_url(ticket)).json()["ticket"]["blockers"] == [entry(first), entry(second)]
        activity = Activity.objects.get(ticket=ticket)
        assert (activity.action, activity.actor, activity.changes) == (
            "blocker_added", editor, {"blockers": {"old": [second.id], "new": sorted([first.id, second.id])}})
        assert board_listener.card_frames() == []  # board cards do not show blockers

    def test_adding_twice_changes_nothing(self, client_for, editor, chain):
        a, b = chain[:2]
        api = client_for(editor)
        api.post(add_url(b), {"blocker_ticket_id": a.id})
        response = api.post(add_url(b), {"blocker_ticket_id": a.id})
        assert (response.status_code, response.json()) == (201, {"ok": True, "blockers": [entry(a)]})
        assert (links(), Activity.objects.count()) == ({(a.id, b.id)}, 1)

    def test_an_archived_ticket_may_block(self, client_for, editor, project, ticket):
        shelved = TicketFactory(project=project, archived_at=timezone.now())
        response = client_for(editor).post(add_url(ticket), {"blocker_ticket_id": shelved.id})
        assert (response.status_code, response.json()["blockers"]) == (201, [entry(shelved)])

    def test_branches_that_meet_are_no_cycle(self, client_for, editor, chain):
        a, b, c, d = chain
        block(a, b)
        block(a, c)
        block(b, d)
        assert client_for(editor).post(add_url(d), {"blocker_ticket_id": c.id}).status_code == 201
        assert (c.id, d.id) in links()

    @pytest.mark.parametrize(("existing", "blocker", "blocked"), [
        ([("A", "B")], "B", "A"),
        ([("A", "B"), ("B", "C")], "C", "A"),
        ([("A", "B"), ("B", "C"), ("C", "D")], "D", "A"),
        ([("A", "B"), ("A", "C"), ("C", "D")], "D", "A"),
    ], ids=["direct", "through-one", "through-two", "through-a-branch"])
    def test_a_cycle_is_422(self, client_for, editor, chain, existing, blocker, blocked):
        tickets = {ticket.title: ticket for ticket in chain}
        for first, second in existing:
            block(tickets[first], tickets[second])
        before = links()
        response = client_for(editor).post(add_url(tickets[blocked]), {"blocker_ticket_id": tickets[blocker].id})
        assert (response.status_code, response.json()) == (422, {"code": "validation_failed",
            "error": f"blocker_ticket_id: {tickets[blocked].prefix_ref} already blocks {tickets[blocker].prefix_ref}, "
                     "directly or through other tickets", "field": "blocker_ticket_id"})
        assert (links(), Activity.objects.exists()) == (before, False)

    def test_links_through_a_deleted_ticket_do_not_count(self, client_for, editor, project, chain):
        a, b = chain[:2]
        gone = TicketFactory(project=project, deleted_at=timezone.now())
        block(a, gone)
        block(gone, b)
        assert client_for(editor).post(add_url(a), {"blocker_ticket_id": b.id}).status_code == 201

    def test_the_cycle_check_takes_the_same_queries_for_a_long_chain(self, client_for, editor, project,
                                                                      django_assert_max_num_queries):
        api = client_for(editor)
        api.get(f"/api/v1/projects/{project.id}/tickets")  # the token's first use is written once
        for length in (3, 40):
            tickets = [TicketFactory(project=project) for _ in range(length)]
            for blocker, blocked in pairwise(tickets):
                block(blocker, blocked)
            with django_assert_max_num_queries(12):
                assert api.post(add_url(tickets[0]), {"blocker_ticket_id": tickets[-1].id}).status_code == 422

    def test_itself_is_422(self, client_for, editor, ticket):
        response = client_for(editor).post(add_url(ticket), {"blocker_ticket_id": ticket.id})
        assert (response.status_code, response.json()) == (422, {"code": "validation_failed",
            "error": "blocker_ticket_id: a ticket cannot block itself", "field": "blocker_ticket_id"})
        assert not Blocker.objects.exists()

    @pytest.mark.parametrize(("make_body", "error"), [
        (lambda project: {}, "blocker_ticket_id is required"),
        (lambda project: {"blocker_ticket_id": "abc"}, "blocker_ticket_id: A valid integer is required."),
        (lambda project: {"blocker_ticket_id": 2**63},
         "blocker_ticket_id: Ensure this value is less than or equal to 9223372036854775807."),
        (lambda project: {"blocker_ticket_id": 999999}, "blocker_ticket_id: no such ticket in this project"),
        (lambda project: {"blocker_ticket_id": TicketFactory().id},
         "blocker_ticket_id: no such ticket in this project"),
        (lambda project: {"blocker_ticket_id": TicketFactory(project=project, deleted_at=timezone.now()).id},
         "blocker_ticket_id: no such ticket in this project"),
    ], ids=["missing", "not-a-number", "too-large", "unknown", "other-project", "deleted"])
    def test_invalid_blocker_is_422(self, client_for, editor, project, ticket, make_body, error):
        response = client_for(editor).post(add_url(ticket), make_body(project))
        assert (response.status_code, response.json()) == (422, {
            "code": "validation_failed", "error": error, "field": "blocker_ticket_id"})
        assert (Blocker.objects.exists(), Activity.objects.exists()) == (False, False)

    def test_archived_ticket_is_422(self, client_for, editor, project, chain):
        shelved = TicketFactory(project=project, archived_at=timezone.now())
        response = client_for(editor).post(add_url(shelved), {"blocker_ticket_id": chain[0].id})
        assert (response.status_code, response.json()) == (422, {
            "code": "validation_failed", "error": "ticket is archived: unarchive it first"})
        assert not Blocker.objects.exists()

    @pytest.mark.parametrize(("role", "expected"), EDITOR_LADDER)
    def test_role_ladder(self, client_for, member_with, chain, role, expected):
        response = client_for(member_with(role)).post(add_url(chain[1]), {"blocker_ticket_id": chain[0].id})
        assert response.status_code == (expected or 201)
        assert Blocker.objects.exists() == (expected is None)

    def test_deleted_missing_non_member_404_anonymous_401(self, client_for, anonymous, editor, outsider, project,
                                                          chain):
        deleted = TicketFactory(project=project, deleted_at=timezone.now())
        body = {"blocker_ticket_id": chain[0].id}
        assert client_for(editor).post(add_url(deleted), body).status_code == 404
        assert client_for(editor).post("/api/v1/tickets/999999/blockers", body).status_code == 404
        assert client_for(outsider).post(add_url(chain[1]), body).status_code == 404
        assert anonymous.post(add_url(chain[1]), body).status_code == 401
        assert not Blocker.objects.exists()


class TestRemove:
    def test_removes_and_answers_what_is_left(self, client_for, editor, ticket, chain, board_listener,
                                              django_capture_on_commit_callbacks):
        a, b = chain[:2]
        block(a, ticket)
        block(b, ticket)
        api = client_for(editor)
        with django_capture_on_commit_callbacks(execute=True):
            response = api.post(remove_url(ticket, a))
        assert (response.status_code, response.json()) == (200, {"ok": True, "blockers": [entry(b)]})
        assert links() == {(b.id, ticket.id)}
        assert api.get(ticket_url(ticket)).json()["ticket"]["blockers"] == [entry(b)]
        activity = Activity.objects.get(ticket=ticket)
        assert (activity.action, activity.changes) == (
            "blocker_removed", {"blockers": {"old": sorted([a.id, b.id]), "new": [b.id]}})
        assert board_listener.card_frames() == []

    def test_a_ticket_that_does_not_block_changes_nothing(self, client_for, editor, ticket, chain):
        block(chain[0], ticket)
        response = client_for(editor).post(remove_url(ticket, chain[1]))
        assert (response.status_code, response.json()) == (200, {"ok": True, "blockers": [entry(chain[0])]})
        assert not Activity.objects.exists()

    def test_archived_ticket_is_422(self, client_for, editor, ticket, chain):
        block(chain[0], ticket)
        ticket.archived_at = timezone.now()
        ticket.save()
        assert client_for(editor).post(remove_url(ticket, chain[0])).status_code == 422
        assert links() == {(chain[0].id, ticket.id)}

    @pytest.mark.parametrize(("role", "expected"), EDITOR_LADDER)
    def test_role_ladder(self, client_for, member_with, ticket, chain, role, expected):
        block(chain[0], ticket)
        assert client_for(member_with(role)).post(remove_url(ticket, chain[0])).status_code == (expected or 200)
        assert Blocker.objects.exists() == bool(expected)

    def test_missing_non_member_404_anonymous_401(self, client_for, anonymous, editor, outsider, ticket, chain):
        block(chain[0], ticket)
        assert client_for(editor).post(f"/api/v1/tickets/999999/blockers/{chain[0].id}/delete").status_code == 404
        assert client_for(outsider).post(remove_url(ticket, chain[0])).status_code == 404
        assert anonymous.post(remove_url(ticket, chain[0])).status_code == 401
        assert links() == {(chain[0].id, ticket.id)}


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL's row locks and real threads")
def test_links_added_at_once_never_close_a_cycle():
    """Each thread adds one link of a ring: without the project lock every check passes and the ring closes."""
    project = ProjectFactory()
    ring = [TicketFactory(project=project) for _ in range(6)]
    start = Barrier(len(ring))

    def link(index: int) -> bool:
        start.wait()
        try:
            services.add_blocker(ticket=ring[index], blocker=ring[(index + 1) % len(ring)], actor=project.owner)
            return True
        except RuleViolation:
            return False
        finally:
            connection.close()

    with ThreadPoolExecutor(len(ring)) as pool:
        added = list(pool.map(link, range(len(ring))))

    assert (added.count(True), Blocker.objects.count()) == (len(ring) - 1, len(ring) - 1)
