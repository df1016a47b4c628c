"""Every way out of a project goes through projects.services.remove_member, which closes the removed
member's board sockets of that project (a message to its member group, after commit)."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import transaction

from accounts.consumers import CLOSE
from projects.models import Membership
from projects.roles import Role
from projects.services import remove_member, set_member_role
from tests.admin_forms import FormFields


def test_remove_member_deletes_and_sends(project, viewer, removal_of, django_capture_on_commit_callbacks):
    listener = removal_of(viewer)
    with django_capture_on_commit_callbacks(execute=True):
        assert remove_member(project=project, user=viewer)
    assert listener.messages() == [CLOSE]
    assert not Membership.objects.filter(project=project, user=viewer).exists()


def test_a_removal_rolled_back_sends_nothing(project, viewer, removal_of, django_capture_on_commit_callbacks):
    listener = removal_of(viewer)
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(RuntimeError), transaction.atomic():
        remove_member(project=project, user=viewer)
        raise RuntimeError("rolled back")
    assert listener.messages() == []
    assert Membership.objects.filter(project=project, user=viewer).exists()


def test_removing_a_non_member_sends_nothing(project, outsider, removal_of, django_capture_on_commit_callbacks):
    listener = removal_of(outsider)
    with django_capture_on_commit_callbacks(execute=True):
        assert not remove_member(project=project, user=outsider)
    assert listener.messages() == []


def test_a_role_change_sends_nothing(project, editor, removal_of, django_capture_on_commit_callbacks):
    listener = removal_of(editor)
    with django_capture_on_commit_callbacks(execute=True):
        set_member_role(project=project, user=editor, role=Role.VIEWER)
    assert listener.messages() == []


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue().strip()


def test_removemember_command(project, viewer, removal_of, django_capture_on_commit_callbacks):
    listener = removal_of(viewer)
    with django_capture_on_commit_callbacks(execute=True):
        assert run("removemember", str(project.pk), viewer.username) == "removed"
    assert listener.messages() == [CLOSE]
    with pytest.raises(CommandError, match="is not a member"):
        run("removemember", str(project.pk), viewer.username)
    with pytest.raises(CommandError, match="does not exist"):
        run("removemember", str(project.pk), "nobody")
    with pytest.raises(CommandError, match="does not exist"):
        run("removemember", "999999", viewer.username)


def test_deleting_a_membership_inline_on_the_project_page(staff, project, viewer, editor, removal_of,
                                                          django_capture_on_commit_callbacks):
    removed, kept = removal_of(viewer), removal_of(editor)
    url = f"/admin/projects/project/{project.pk}/change/"
    form = FormFields()
    form.feed(staff.get(url).content.decode())
    rows = {int(value[0]): key.removesuffix("-user") for key, value in form.data.items()
            if key.startswith("memberships-") and key.endswith("-user") and value}
    form.data[f"{rows[viewer.pk]}-DELETE"] = ["on"]
    form.data[f"{rows[editor.pk]}-role"] = [Role.VIEWER]  # changed in the same save: kept, not removed

    with django_capture_on_commit_callbacks(execute=True):
        response = staff.post(url, form.data)

    assert response.status_code == 302, response.content.decode()[:2000]
    assert (removed.messages(), kept.messages()) == ([CLOSE], [])
    assert dict(Membership.objects.filter(project=project).values_list("user_id", "role")) == {
        project.owner_id: Role.MANAGER, editor.pk: Role.VIEWER}
