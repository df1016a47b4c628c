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
        404, {"code": "not_found", "error": message})


def test_a_download_does_not_depend_on_the_accept_header(client_for, manager, objects):
    assert default_storage.save("attachments/x.txt", ContentFile(b"x")) == "attachments/x.txt"
    response = client_for(manager).get(f"/api/v1/attachments/{objects['attachment']}", HTTP_ACCEPT="image/png")
    assert response.status_code == 200
    missing = client_for(manager).get(f"/api/v1/attachments/{MISSING}", HTTP_ACCEPT="image/png")
    assert (missing.status_code, missing.json()) == (404, {"code": "not_found", "error": "attachment not found"})


BAD_BODY = {"title": "", "status": 7, "text": "", "message": "", "user_id": "x", "blocker_ticket_id": "x", "item_ids": "x"}


@pytest.mark.parametrize(("path", "kind"), [
    ("/api/v1/projects/{project}/tickets/{number}/update", "ticket"),
    ("/api/v1/projects/{project}/tickets/{number}/move", "ticket"),
    ("/api/v1/projects/{project}/tickets/{number}/assign", "ticket"),
    ("/api/v1/tickets/{ticket}/checklist", "ticket"),
    ("/api/v1/tickets/{ticket}/checklist/sort", "ticket"),
    ("/api/v1/tickets/{ticket}/blockers", "ticket"),
    ("/api/v1/reactions/{comment}/update", "comment"),
    ("/api/v1/checklist/{item}/update", "item"),
])
def test_checks_come_in_order_404_then_403_then_422(client_for, project, manager, viewer, objects, path, kind):
    """Resolved before the handler runs: a missing object beats a role too low, which beats a bad body."""
    ticket = TicketFactory._meta.model.objects.get(pk=objects["ticket"])
    ids = {"project": project.id, "number": ticket.number, **objects}
    missing = client_for(manager).post(path.format(**{**ids, kind: MISSING, "number": MISSING}), BAD_BODY)
    too_low = client_for(viewer).post(path.format(**ids), BAD_BODY)
    invalid = client_for(manager).post(path.format(**ids), BAD_BODY)
    assert (missing.status_code, too_low.status_code, invalid.status_code) == (404, 403, 422)
