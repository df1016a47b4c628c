"""The hand-built list and board shapes must say exactly what their declared (documented) fields say."""

from datetime import date

import pytest
from django.utils import timezone
from rest_framework import serializers

from tests.factories import TagFactory, TicketFactory, UserFactory
from tickets import selectors
from tickets.models import ChecklistItem, Comment
from tickets.serializers import BoardTicketOutput, TicketListOutput, UnarchivedTicketOutput


@pytest.fixture
def rich_ticket(project, editor):
    editor.avatar_url = "https://example.com/a.png"
    editor.save()
    ticket = TicketFactory(project=project, type="bug", priority="urgent", deadline=date(2027, 4, 5),
                           tags=[TagFactory(project=project), TagFactory(project=project)],
                           assignees=[editor, UserFactory(name="")], archived_at=timezone.now())
    ChecklistItem.objects.create(ticket=ticket, text="x", done=True)
    Comment.objects.create(ticket=ticket, author=editor, message="m")
    return selectors.board_ticket(ticket_id=ticket.pk)


@pytest.mark.parametrize("output", [TicketListOutput, BoardTicketOutput, UnarchivedTicketOutput])
def test_hand_built_shape_equals_drf_rendering_of_the_declared_fields(rich_ticket, output):
    serializer = output(rich_ticket)
    by_hand = serializer.to_representation(rich_ticket)
    by_drf = serializers.ModelSerializer.to_representation(serializer, rich_ticket)
    assert list(by_hand) == output.Meta.fields
    assert by_hand == dict(by_drf)
