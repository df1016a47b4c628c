"""Routes that name an object instead of its project: a non-member learns nothing about the id."""

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from tests.factories import TicketFactory
from tickets.models import Attachment, ChecklistItem, Comment

MISSING = 987654321


@pytest.fixture
def objects(project, manager):
    ticket = TicketFactory(project=project)
    return {
        "ticket": ticket.id,
        "comment": Comment.objects.create(ticket=ticket, author=manager, message="m").id,
        "item": ChecklistItem.objects.create(ticket=ticket, text="t").id,
        "attachment": Attachment.objects.create(ticket=ticket, file="attachments/x.txt", original_name="x.txt",
                                                filesize=1, mime_type="text/plain", uploaded_by=manager).id,
    }


@pytest.mark.parametrize(("method", "path", "kind", "message"), [
    ("post", "/api/v1/tickets/{}/checklist", "ticket", "ticket not found"),
    ("post", "/api/v1/tickets/{}/blockers", "ticket", "ticket not found"),
    ("post", "/api/v1/tickets/{}/attachments", "ticket", "ticket not found"),
    ("post", "/api/v1/reactions/{}/update", "comment", "comment not found"),
    ("post", "/api/v1/reactions/{}/delete", "comment", "comment not found"),
    ("post", "/api/v1/checklist/{}/toggle", "item", "checklist item not found"),
    ("get", "/api/v1/attachments/{}", "attachment", "attachment not found"),
    ("post", "/api/v1/attachments/{}/delete", "attachment", "attachment not found"),
])
def test_a_non_member_gets_the_answer_of_a_missing_id(client_for, outsider, objects, method, path, kind, message):
    api = client_for(outsider)
    existing = getattr(api, method)(path.format(objects[kind]), {})
    missing = getattr(api, method)(path.format(MISSING), {})
    assert (existing.status_code, existing.json()) == (missing.status_code, missing.json()) == (
        404, {"error": message})


def test_a_download_does_not_depend_on_the_accept_header(client_for, manager, objects):
    assert default_storage.save("attachments/x.txt", ContentFile(b"x")) == "attachments/x.txt"
    response = client_for(manager).get(f"/api/v1/attachments/{objects['attachment']}", HTTP_ACCEPT="image/png")
    assert response.status_code == 200
    missing = client_for(manager).get(f"/api/v1/attachments/{MISSING}", HTTP_ACCEPT="image/png")
    assert (missing.status_code, missing.json()) == (404, {"error": "attachment not found"})
