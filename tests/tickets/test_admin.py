import pytest
from django.db.models import RestrictedError
from django.utils import timezone

from tests.factories import TicketFactory
from tickets.models import Activity, Ticket


def test_search_by_ref_and_by_title(staff, project):
    wanted = TicketFactory(project=project, title="Needle in haystack")
    other = TicketFactory(project=project, title="Something else")
    page = staff.get(f"/admin/tickets/ticket/?q=apl-{wanted.number}").content.decode()
    assert "Needle in haystack" in page and "Something else" not in page
    page = staff.get("/admin/tickets/ticket/?q=something").content.decode()
    assert other.title in page and wanted.title not in page


def test_filters(staff, project):
    TicketFactory(project=project, title="Live one")
    TicketFactory(project=project, title="Archived one", archived_at=timezone.now())
    TicketFactory(project=project, title="Deleted one", deleted_at=timezone.now())
    page = staff.get("/admin/tickets/ticket/?deleted=yes").content.decode()
    assert "Deleted one" in page and "Live one" not in page
    page = staff.get("/admin/tickets/ticket/?archived=yes&deleted=no").content.decode()
    assert "Archived one" in page and "Live one" not in page and "Deleted one" not in page
    page = staff.get(f"/admin/tickets/ticket/?project__id__exact={project.id}&type__exact=feature")
    assert page.status_code == 200


def test_restore_action_brings_a_deleted_ticket_back(staff, client_for, project, manager):
    ticket = TicketFactory(project=project, deleted_at=timezone.now())
    response = staff.post("/admin/tickets/ticket/", {"action": "restore", "_selected_action": [ticket.pk]})
    assert response.status_code == 302
    assert Ticket.objects.get(pk=ticket.pk).deleted_at is None
    assert Activity.objects.get(ticket=ticket).action == "restored"
    api = client_for(manager)
    assert api.get(f"/api/v1/projects/{project.id}/tickets/{ticket.number}").status_code == 200


def test_change_page_shows_history(staff, client_for, project, manager, ticket):
    client_for(manager).post(f"/api/v1/projects/{project.id}/tickets/{ticket.number}/move", {"status": "todo"})
    page = staff.get(f"/admin/tickets/ticket/{ticket.pk}/change/").content.decode()
    assert "moved" in page


def test_a_project_with_tickets_can_be_deleted_but_not_a_column_in_use(staff, project):
    ticket = TicketFactory(project=project)
    with pytest.raises(RestrictedError):
        ticket.status.delete()
    response = staff.post(f"/admin/projects/project/{project.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not Ticket.objects.filter(pk=ticket.pk).exists()
