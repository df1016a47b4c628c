import pytest
from django.db import connection
from django.db.models import RestrictedError
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from tests.factories import AttachmentFactory, TagFactory, TicketFactory, UserFactory
from tickets.models import Activity, ChecklistItem, Comment, Ticket

from .conftest import status_of


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


def board_url(project) -> str:
    return f"/api/v1/projects/{project.id}/board"


def test_a_status_changed_here_is_a_move_the_board_hears_of(staff, client_for, project, manager, board_listener,
                                                             django_capture_on_commit_callbacks):
    ticket, done = TicketFactory(project=project), status_of(project, "done")
    api = client_for(manager)
    board_etag = api.get(board_url(project))["ETag"]
    with django_capture_on_commit_callbacks(execute=True):
        response = staff.post(f"/admin/tickets/ticket/{ticket.pk}/change/", ticket_form_data(ticket, status=done.pk))
    assert response.status_code == 302
    assert api.get(board_url(project), HTTP_IF_NONE_MATCH=board_etag).status_code == 200
    ticket.refresh_from_db()
    assert (ticket.status, ticket.done_at is not None) == (done, True)
    assert board_listener.events() == ["ticket.moved"]
    assert list(Activity.objects.filter(ticket=ticket).values_list("action", flat=True)) == ["moved"]


def test_fields_tags_and_assignees_changed_here_are_recorded_and_announced(staff, project, editor, board_listener,
                                                                            django_capture_on_commit_callbacks):
    ticket, tag = TicketFactory(project=project, title="Old"), TagFactory(project=project)
    with django_capture_on_commit_callbacks(execute=True):
        response = staff.post(f"/admin/tickets/ticket/{ticket.pk}/change/",
                              ticket_form_data(ticket, title="New", tags=[tag.pk], assignees=[editor.pk]))
    assert response.status_code == 302
    updated, assigned = (Activity.objects.get(ticket=ticket, action=action) for action in ("updated", "assigned"))
    assert (updated.changes["title"], updated.changes["tags"]) == ({"old": "Old", "new": "New"},
                                                                   {"old": [], "new": [tag.pk]})
    assert assigned.changes == {"assignees": {"old": [], "new": [editor.pk]}}
    assert board_listener.events() == ["ticket.updated", "ticket.updated"]
    ticket.refresh_from_db()
    assert (ticket.title, list(ticket.tags.all()), list(ticket.assignees.all())) == ("New", [tag], [editor])


def test_an_unchanged_save_writes_nothing(staff, project, board_listener, django_capture_on_commit_callbacks):
    ticket = TicketFactory(project=project)
    with django_capture_on_commit_callbacks(execute=True):
        assert staff.post(f"/admin/tickets/ticket/{ticket.pk}/change/", ticket_form_data(ticket)).status_code == 302
    assert (board_listener.events(), Activity.objects.count()) == ([], 0)


def test_an_archived_ticket_is_read_here(staff, project):
    ticket = TicketFactory(project=project, title="Kept", archived_at=timezone.now())
    response = staff.post(f"/admin/tickets/ticket/{ticket.pk}/change/", ticket_form_data(ticket, title="Changed"))
    assert response.status_code == 302
    assert (Ticket.objects.get(pk=ticket.pk).title, Activity.objects.count()) == ("Kept", 0)


def test_tickets_are_not_added_here(staff, project):
    assert staff.get("/admin/tickets/ticket/add/").status_code == 403
    assert b"/admin/tickets/ticket/add/" not in staff.get("/admin/tickets/ticket/").content


def test_the_checklist_is_read_here(staff, project):
    ticket = TicketFactory(project=project)
    item = ChecklistItem.objects.create(ticket=ticket, text="write the migration")
    assert 'name="checklist_items-0-text"' not in change_form(staff, ticket)
    data = ticket_form_data(ticket, **{"checklist_items-TOTAL_FORMS": 2, "checklist_items-INITIAL_FORMS": 1,
                                       "checklist_items-0-id": item.pk, "checklist_items-0-ticket": ticket.pk,
                                       "checklist_items-0-text": "changed", "checklist_items-0-done": "on",
                                       "checklist_items-0-DELETE": "on", "checklist_items-1-ticket": ticket.pk,
                                       "checklist_items-1-text": "added"})
    staff.post(f"/admin/tickets/ticket/{ticket.pk}/change/", data)
    assert list(ChecklistItem.objects.values_list("text", "done")) == [("write the migration", False)]


def test_the_change_page_reads_its_rows_in_a_fixed_number_of_queries(staff, project):
    ticket = TicketFactory(project=project)

    def add_rows(count: int) -> None:
        for index in range(count):
            comment = Comment.objects.create(ticket=ticket, author=UserFactory(), message=f"c{index}")
            AttachmentFactory(ticket=ticket, comment=comment, uploaded_by=UserFactory())
            Activity.objects.create(ticket=ticket, actor=UserFactory(), action="commented")

    counts = []
    for count in (1, 5):
        add_rows(count)
        with CaptureQueriesContext(connection) as captured:
            change_form(staff, ticket)
        counts.append(len(captured.captured_queries))
    assert counts[0] == counts[1]
