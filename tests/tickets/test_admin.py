import pytest
from django.db.models import RestrictedError
from django.utils import timezone

from tests.factories import AttachmentFactory, TagFactory, TicketFactory
from tickets.models import Activity, ChecklistItem, Comment, Ticket


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


def change_form(staff, ticket) -> str:
    return staff.get(f"/admin/tickets/ticket/{ticket.pk}/change/").content.decode()


def test_change_form_offers_only_the_projects_statuses_tags_and_members(staff, project, editor, outsider):
    TagFactory(project=project, name="ours-tag"), TagFactory(name="their-tag")
    ticket = TicketFactory(project=project)
    form = change_form(staff, ticket)
    assert "ours-tag" in form and "their-tag" not in form
    assert f">{editor.username}</option>" in form and f">{outsider.username}</option>" not in form
    assert form.count(">Backlog</option>") == 1  # the other project's backlog column is not offered


def ticket_form_data(ticket, **changes) -> dict:
    data = {"title": ticket.title, "description": "", "status": ticket.status_id, "type": ticket.type,
            "priority": "", "sort_order": ticket.sort_order, "created_by": ticket.created_by_id,
            "tags": [], "assignees": []}
    for prefix in ["checklist_items", "comments", "attachments", "activities"]:
        data.update({f"{prefix}-TOTAL_FORMS": 0, f"{prefix}-INITIAL_FORMS": 0})
    return {**data, **changes}


@pytest.mark.parametrize("field", ["tags", "assignees", "status"])
def test_saving_a_foreign_tag_member_or_status_is_refused(staff, project, outsider, field):
    ticket = TicketFactory(project=project)
    foreign = {"tags": lambda: [TagFactory().pk], "assignees": lambda: [outsider.pk],
               "status": lambda: TagFactory().project.statuses.first().pk}[field]()
    response = staff.post(f"/admin/tickets/ticket/{ticket.pk}/change/", ticket_form_data(ticket, **{field: foreign}))
    assert response.status_code == 200  # the form again, with its error
    assert "errorlist" in response.content.decode()
    ticket.refresh_from_db()
    assert (list(ticket.tags.all()), list(ticket.assignees.all()), ticket.status.project_id) == ([], [], project.pk)


def test_saving_the_projects_own_tags_and_members(staff, project, editor):
    ticket, tag = TicketFactory(project=project), TagFactory(project=project)
    response = staff.post(f"/admin/tickets/ticket/{ticket.pk}/change/",
                          ticket_form_data(ticket, tags=[tag.pk], assignees=[editor.pk]))
    assert response.status_code == 302
    assert (list(ticket.tags.all()), list(ticket.assignees.all())) == ([tag], [editor])


def test_change_page_shows_checklist_comments_and_attachments(staff, project, editor):
    ticket = TicketFactory(project=project)
    ChecklistItem.objects.create(ticket=ticket, text="write the migration")
    Comment.objects.create(ticket=ticket, author=editor, message="looks good to me")
    AttachmentFactory(ticket=ticket, original_name="spec.pdf")
    form = change_form(staff, ticket)
    assert "write the migration" in form and "looks good to me" in form and "spec.pdf" in form
