"""The project's admin writes as the API does: a project added there is made by create_project, a tag deleted
there by delete_tag, a tag edited there renews its tickets' ETags, an invitation revoked there by
revoke_invitation."""

from django.utils import timezone

from projects.models import Membership, Project, Tag
from projects.roles import Role
from tests.admin_forms import form_of
from tests.factories import TagFactory, TicketFactory, UserFactory
from tests.tickets.conftest import BoardListener, ticket_url
from tickets.broadcast import board_group
from tickets.models import Activity

from .test_invitations import make_invitation


def tag_rows(form: dict, tag: Tag) -> str:
    [row] = [key.removesuffix("-id") for key, value in form.items()
             if key.startswith("tags-") and key.endswith("-id") and value == [str(tag.pk)]]
    return row


def test_a_project_added_in_the_admin_is_made_as_through_the_api(staff):
    owner = UserFactory()
    form = form_of(staff, "/admin/projects/project/add/")
    form.update(name=["Moon base"], prefix=["mb"], owner=[str(owner.pk)], estimation_mode=["hours"])
    form.pop("docs_enabled", None)  # unchecked

    response = staff.post("/admin/projects/project/add/", form)

    assert response.status_code == 302, response.content.decode()[:2000]
    project = Project.objects.get(name="Moon base")
    assert (project.prefix, project.owner, project.estimation_mode, project.docs_enabled) == (
        "MB", owner, "hours", False)
    assert list(Membership.objects.filter(project=project).values_list("user_id", "role")) == [
        (owner.pk, Role.MANAGER)]
    assert list(project.statuses.order_by("sort_order").values_list("slug", flat=True)) == [
        "backlog", "todo", "in_progress", "review", "done"]
    assert response["Location"].endswith("/admin/projects/project/")


def test_a_tag_deleted_in_the_admin_leaves_as_through_the_api(staff, project, django_capture_on_commit_callbacks):
    tag = TagFactory(project=project, name="ui")
    ticket = TicketFactory(project=project, tags=[tag])
    archived = TicketFactory(project=project, tags=[tag], archived_at=timezone.now())
    listener = BoardListener(board_group(project.pk))
    url = f"/admin/projects/project/{project.pk}/change/"
    form = form_of(staff, url)
    form[f"{tag_rows(form, tag)}-DELETE"] = ["on"]

    with django_capture_on_commit_callbacks(execute=True):
        response = staff.post(url, form)

    assert response.status_code == 302, response.content.decode()[:2000]
    assert not Tag.objects.filter(pk=tag.pk).exists()
    assert listener.events() == ["ticket.updated", "tag.deleted"]  # the card on the board, then the tag
    for tagged in (ticket, archived):
        assert Activity.objects.get(ticket=tagged).changes == {"tags": {"old": [tag.pk], "new": []}}
    listener.close()


def test_a_tag_edited_in_the_admin_renews_its_tickets_etags(staff, project, client_for, manager):
    tag = TagFactory(project=project, name="ui")
    ticket = TicketFactory(project=project, tags=[tag])
    api = client_for(manager)
    etag = api.get(ticket_url(ticket))["ETag"]
    url = f"/admin/projects/project/{project.pk}/change/"
    form = form_of(staff, url)
    form[f"{tag_rows(form, tag)}-name"] = ["frontend"]

    assert staff.post(url, form).status_code == 302

    response = api.get(ticket_url(ticket), HTTP_IF_NONE_MATCH=etag)
    assert response.status_code == 200
    assert response.json()["ticket"]["tags"][0]["name"] == "frontend"


def test_invitations_are_revoked_in_the_admin_but_an_accepted_one_stays(staff, project, editor):
    pending = make_invitation(project, "grace@example.com")
    accepted = make_invitation(project, "lin@example.com", accepted_at=timezone.now(), accepted_by=editor)
    assert "grace@example.com" in staff.get("/admin/projects/invitation/").content.decode()
    response = staff.post("/admin/projects/invitation/", {"action": "revoke",
                                                          "_selected_action": [pending.pk, accepted.pk]})
    assert response.status_code == 302
    pending.refresh_from_db(), accepted.refresh_from_db()
    assert pending.revoked_at is not None and accepted.revoked_at is None
    assert staff.get("/admin/projects/invitation/add/").status_code == 403
