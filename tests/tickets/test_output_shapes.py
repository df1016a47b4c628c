"""The list and board shapes built from plain rows must say, byte for byte, what DRF renders from
ticket objects through the declared (documented) fields, as the board did before it read rows
(bench/legacy.py keeps that board: the benchmarks' baseline and this reference)."""

from datetime import date, datetime, timedelta
from datetime import timezone as dt_timezone
from decimal import Decimal

import pytest
from django.utils import timezone
from rest_framework.renderers import JSONRenderer

from bench import legacy
from events.models import ProjectEvent
from projects import selectors as project_selectors
from projects.models import Tag
from tests.factories import (
    AttachmentFactory,
    BlockerFactory,
    StatusFactory,
    TagFactory,
    TicketFactory,
    UserFactory,
)
from tickets import selectors, services
from tickets.models import ChecklistItem, Comment, Ticket
from tickets.serializers import BoardTicketOutput, TicketDetailOutput, TicketListOutput, ticket_shapes

from .conftest import status_of


@pytest.fixture
def rich_project(project, manager, editor):
    """Everything a card can carry, and what makes mapping rows onto loaded tags and members tricky."""
    editor.avatar_url = "https://example.com/a.png"
    editor.name = "Zoë “quoted” \u2028 Ü"
    editor.save()
    former = UserFactory(name="")  # never a member: shown by username, loaded on its own
    late, early = TagFactory(project=project, sort_order=9, name="late"), TagFactory(project=project, sort_order=1)
    same_order = TagFactory(project=project, sort_order=1, name="same order, higher id")
    extra = StatusFactory(project=project, slug="qa", hidden=True)
    moment = datetime(2026, 3, 4, 5, 6, 7, 890123, tzinfo=dt_timezone.utc)
    tickets = [
        TicketFactory(project=project, type="bug", priority="urgent", deadline=date(2027, 4, 5),
                      tags=[late, same_order, early], assignees=[former, editor, manager], created_by=former,
                      title="Émoji 🚀 and \"quotes\" \\ </script>"),
        TicketFactory(project=project, status=extra, sort_order=-3),
        TicketFactory(project=project, status=status_of(project, "done"), done_at=timezone.now()),
        TicketFactory(project=project, archived_at=timezone.now(), tags=[early]),
        TicketFactory(project=project, deleted_at=timezone.now(), assignees=[former]),
    ]
    Ticket.objects.filter(pk=tickets[0].pk).update(created_at=moment)
    Ticket.objects.filter(pk=tickets[1].pk).update(created_at=moment.replace(microsecond=0) - timedelta(days=400))
    ChecklistItem.objects.create(ticket=tickets[0], text="x", done=True)
    ChecklistItem.objects.create(ticket=tickets[0], text="y")
    Comment.objects.create(ticket=tickets[0], author=editor, message="m")
    Comment.objects.create(ticket=tickets[0], author=editor, message="gone", deleted_at=timezone.now())
    return project, tickets


def test_board_is_byte_for_byte_what_the_objects_rendered(rich_project, client_for, editor):
    project, _ = rich_project
    response = client_for(editor).get(f"/api/v1/projects/{project.id}/board")
    membership = project_selectors.membership_for(user=editor, project_id=project.id)
    assert response.status_code == 200
    assert response.content == JSONRenderer().render(legacy.board_payload(membership=membership))


def test_frames_shape_any_ticket_even_deleted_or_archived_with_former_members(rich_project):
    _, tickets = rich_project
    ids = [ticket.pk for ticket in tickets]
    by_rows = {shape["id"]: shape for shape in ticket_shapes(selectors.board_tickets_by_id(ticket_ids=ids))}
    reference = BoardTicketOutput(legacy.board_tickets(Ticket.objects.filter(pk__in=ids)), many=True).data
    assert by_rows == {shape["id"]: shape for shape in reference}
    assert [list(shape) for shape in by_rows.values()] == [BoardTicketOutput.Meta.fields] * len(tickets)
    assert by_rows[tickets[0].pk]["created_at"] == "2026-03-04 05:06:07"


def test_list_is_what_the_declared_fields_render(rich_project):
    project, _ = rich_project
    tickets = Ticket.objects.active().filter(project=project).order_by("sort_order", "id")
    rows = ticket_shapes(selectors.ticket_list(project=project))
    assert JSONRenderer().render(rows) == JSONRenderer().render(
        TicketListOutput(legacy.board_tickets(tickets), many=True).data)
    assert [list(shape) for shape in rows] == [TicketListOutput.Meta.fields] * 3


def test_detail_is_byte_for_byte_what_the_declared_fields_render(rich_project, client_for, editor):
    project, tickets = rich_project
    ticket, blocking = tickets[0], tickets[1]
    Ticket.objects.filter(pk=ticket.pk).update(estimated_hours=Decimal("2.50"), story_points=3, description="d")
    BlockerFactory(ticket=ticket, blocker=blocking)
    BlockerFactory(ticket=ticket, blocker=tickets[4])  # deleted: not shown
    AttachmentFactory(ticket=ticket)
    AttachmentFactory(ticket=ticket, comment=Comment.objects.get(message="gone"))  # with its deleted comment
    response = client_for(editor).get(f"/api/v1/projects/{project.id}/tickets/{ticket.number}")
    reference = legacy.ticket_detail(Ticket.objects.select_related("project", "status", "created_by").get(pk=ticket.pk))
    assert response.status_code == 200
    assert response.content == JSONRenderer().render({"ticket": reference})
    shown = response.json()["ticket"]
    assert list(shown) == TicketDetailOutput.Meta.fields
    assert [len(shown[part]) for part in ["tags", "assignees", "checklist", "comments", "blockers", "attachments"]] == [
        3, 3, 2, 1, 1, 1]
    assert shown["estimated_hours"] == 2.5 and shown["created_at"] == "2026-03-04 05:06:07"


def test_a_creation_frame_is_the_ticket_as_read_back(rich_project, editor):
    project, _ = rich_project
    late, early = Tag.objects.get(name="late"), Tag.objects.filter(sort_order=1).order_by("id").first()
    ticket = services.create_ticket(project=project, actor=editor, title="Framed", type="bug", priority="low",
                                    deadline=date(2027, 1, 2), checklist=["a", "b"], tags=[late, early])
    frame = ProjectEvent.objects.get(project=project, event="ticket.created").payload["ticket"]
    [read_back] = ticket_shapes(selectors.board_tickets_by_id(ticket_ids=[ticket.pk]))
    assert frame == read_back
    assert [tag["name"] for tag in frame["tags"]] == [early.name, "late"]
    assert frame["checklist_total"] == 2 and frame["creator"] == {"id": editor.id, "name": editor.display_name}
