"""The ticket shapes built from plain rows, in the list, the board, its frames and the detail: exactly the
declared fields, in their order, with the values every part of a ticket gives them."""

from datetime import date, datetime, timedelta
from datetime import timezone as dt_timezone
from decimal import Decimal

import pytest
from django.utils import timezone

from events.models import ProjectEvent
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


def tag(tag) -> dict:
    return {"id": tag.id, "name": tag.name, "color": tag.color}


def expected_card(project, editor, manager) -> dict:
    """The first ticket of rich_project, as every ticket shape shows it."""
    ticket = Ticket.objects.get(project=project, title__startswith="Émoji")
    former = ticket.created_by
    late, same_order = Tag.objects.get(name="late"), Tag.objects.get(name="same order, higher id")
    early = Tag.objects.filter(sort_order=1).order_by("id").first()
    listed = {"id": ticket.id, "project_ticket_number": ticket.number, "prefix_ref": f"APL-{ticket.number}",
              "title": 'Émoji 🚀 and "quotes" \\ </script>', "status": "backlog", "type": "bug", "priority": "urgent",
              "deadline": "2027-04-05", "tags": [tag(early), tag(same_order), tag(late)],
              "created_at": "2026-03-04 05:06:07"}
    people = sorted([former, editor, manager], key=lambda user: user.id)
    return {"list": listed, "board": {
        **listed, "assignees": [{"id": user.id, "name": user.display_name, "avatar": user.avatar} for user in people],
        "creator": {"id": former.id, "name": former.username}, "reaction_count": 1, "checklist_total": 2,
        "checklist_done": 1}}


def test_board_cards_in_their_declared_shape(rich_project, client_for, editor, manager):
    project, tickets = rich_project
    board = client_for(editor).get(f"/api/v1/projects/{project.id}/board").json()
    columns = {column["status"]: column["tickets"] for column in board["columns"]}
    assert columns["backlog"][0] == expected_card(project, editor, manager)["board"]
    assert [[card["id"] for card in cards] for cards in columns.values()] == [
        [tickets[0].id], [], [], [], [tickets[2].id], [tickets[1].id]]  # archived and deleted: not on the board
    assert all(list(card) == BoardTicketOutput.Meta.fields for cards in columns.values() for card in cards)


def test_frames_shape_any_ticket_even_deleted_or_archived_with_former_members(rich_project, editor, manager):
    project, tickets = rich_project
    shapes = ticket_shapes(selectors.board_tickets_by_id(project=project, ticket_ids=[t.pk for t in tickets]))
    assert {shape["id"] for shape in shapes} == {ticket.pk for ticket in tickets}
    assert next(shape for shape in shapes if shape["id"] == tickets[0].pk) == \
        expected_card(project, editor, manager)["board"]
    deleted = next(shape for shape in shapes if shape["id"] == tickets[4].pk)
    assert deleted["assignees"] == [{"id": tickets[0].created_by_id, "name": tickets[0].created_by.username,
                                     "avatar": None}]
    assert all(list(shape) == BoardTicketOutput.Meta.fields for shape in shapes)


def test_list_in_its_declared_shape(rich_project, client_for, editor, manager):
    project, tickets = rich_project
    listed = client_for(editor).get(f"/api/v1/projects/{project.id}/tickets").json()["tickets"]
    assert [shape["id"] for shape in listed] == [tickets[1].id, tickets[0].id, tickets[2].id]  # sort order
    assert listed[1] == expected_card(project, editor, manager)["list"]
    assert listed[0]["created_at"] == "2025-01-28 05:06:07" and listed[0]["status"] == "qa"
    assert all(list(shape) == TicketListOutput.Meta.fields for shape in listed)


def test_detail_in_its_declared_shape(rich_project, client_for, editor, manager):
    project, tickets = rich_project
    ticket, blocking = tickets[0], tickets[1]
    Ticket.objects.filter(pk=ticket.pk).update(estimated_hours=Decimal("2.50"), story_points=3, description="d")
    BlockerFactory(ticket=ticket, blocker=blocking)
    BlockerFactory(ticket=ticket, blocker=tickets[4])  # deleted: not shown
    shown_file = AttachmentFactory(ticket=ticket)
    AttachmentFactory(ticket=ticket, comment=Comment.objects.get(message="gone"))  # with its deleted comment
    response = client_for(editor).get(f"/api/v1/projects/{project.id}/tickets/{ticket.number}")
    assert response.status_code == 200
    shown = response.json()["ticket"]
    card = expected_card(project, editor, manager)
    comment, items = Comment.objects.get(message="m"), list(ChecklistItem.objects.filter(ticket=ticket).order_by("id"))
    ticket.refresh_from_db()
    assert shown == {
        **card["list"], "description": "d", "story_points": 3, "estimated_hours": 2.5,
        "updated_at": ticket.updated_at.strftime("%Y-%m-%d %H:%M:%S"),
        "comments": [{"id": comment.id, "message": "m", "user_id": editor.id, "user_name": editor.display_name,
                      "created_at": comment.created_at.strftime("%Y-%m-%d %H:%M:%S")}],
        "checklist": [{"id": items[0].id, "text": "x", "done": 1}, {"id": items[1].id, "text": "y", "done": 0}],
        "assignees": [{"id": person["id"], "name": person["name"]} for person in card["board"]["assignees"]],
        "creator": card["board"]["creator"],
        "blockers": [{"id": blocking.id, "title": blocking.title, "status": "qa",
                      "project_ticket_number": blocking.number}],
        "attachments": [{"id": shown_file.id, "ticket_id": ticket.id, "original_name": shown_file.original_name,
                         "filesize": shown_file.filesize, "mime_type": shown_file.mime_type}],
        "archived_at": None,
    }
    assert [*shown, "description_html"] == TicketDetailOutput.Meta.fields  # the last only with description=html


def test_a_creation_frame_is_the_ticket_as_read_back(rich_project, editor):
    project, _ = rich_project
    late, early = Tag.objects.get(name="late"), Tag.objects.filter(sort_order=1).order_by("id").first()
    ticket = services.create_ticket(project=project, actor=editor, title="Framed", type="bug", priority="low",
                                    deadline=date(2027, 1, 2), checklist=["a", "b"], tags=[late, early])
    frame = ProjectEvent.objects.get(project=project, event="ticket.created").payload["ticket"]
    [read_back] = ticket_shapes(selectors.board_tickets_by_id(project=project, ticket_ids=[ticket.pk]))
    assert frame == read_back
    assert [tag["name"] for tag in frame["tags"]] == [early.name, "late"]
    assert frame["checklist_total"] == 2 and frame["creator"] == {"id": editor.id, "name": editor.display_name}
