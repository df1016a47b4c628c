"""Who is told what: each rule through the API, and every case in which nobody is told."""

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from notifications.models import Notification
from projects.models import Membership
from projects.roles import Role
from tests.factories import CommentFactory, MembershipFactory, UserFactory
from tests.tickets.conftest import status_of, ticket_url
from tickets import services

from .conftest import told


def comment(client, ticket, text: str):
    response = client.post(ticket_url(ticket, "comments"), {"comment": text}, format="json")
    assert response.status_code == 201, response.json()
    return response.json()["reaction_id"]


def edit(client, comment_id: int, text: str):
    response = client.post(f"/api/v1/reactions/{comment_id}/update", {"message": text}, format="json")
    assert response.status_code == 200, response.json()


def move(client, ticket, status: str):
    response = client.post(ticket_url(ticket, "move"), {"status": status}, format="json")
    assert response.status_code == 200, response.json()


def assign(client, ticket, user):
    return client.post(ticket_url(ticket, "assign"), {"user_id": user.pk}, format="json")


# ---- reaction ----------------------------------------------------------------------------

def test_a_comment_tells_the_creator_and_the_assignees(client_for, ticket, manager, member):
    ada, bob, cy = member("ada"), member("bob"), member("cy", Role.VIEWER)
    ticket.assignees.set([ada, bob])
    comment(client_for(cy), ticket, "Looks good")
    expected = [("reaction", f"{cy.display_name} commented on APL-{ticket.number}")]
    assert (told(manager), told(ada), told(bob), told(cy)) == (expected, expected, expected, [])


def test_nobody_is_told_of_their_own_comment(client_for, ticket, manager):
    ticket.assignees.set([manager])
    comment(client_for(manager), ticket, "Note to self")
    assert Notification.objects.count() == 0


def test_a_former_member_is_told_nothing(client_for, ticket, manager, member):
    ada, bob = member("ada"), member("bob")
    ticket.assignees.set([ada])
    Membership.objects.filter(user=ada).delete()
    comment(client_for(bob), ticket, "Anyone?")
    assert (told(ada), [kind for kind, _ in told(manager)]) == ([], ["reaction"])


# ---- mention -----------------------------------------------------------------------------

def test_a_mentioned_member_is_told_once_as_a_mention(client_for, ticket, manager, member):
    ada, bob, cy = member("ada"), member("bob"), member("cy")
    ticket.assignees.set([ada])
    comment(client_for(cy), ticket, "@ada and @bob, see @ada's note")
    mention = [("mention", f"{cy.display_name} mentioned you on APL-{ticket.number}")]
    assert (told(ada), told(bob)) == (mention, mention)
    assert [kind for kind, _ in told(manager)] == ["reaction"]


def test_a_mentioned_creator_gets_a_mention_and_no_reaction(client_for, ticket, manager, member):
    comment(client_for(member("ada")), ticket, f"@{manager.username} please check")
    assert [kind for kind, _ in told(manager)] == ["mention"]


@pytest.mark.parametrize("text", [
    "ping @ghost",                 # nobody of that name
    "ping @{outsider}",            # a user, not a member
    "write to {member}@example.com",  # an e-mail address is no mention
    "ping @{member}x",             # another name
])
def test_an_at_name_that_is_no_member_is_ignored(client_for, project, manager, outsider, member, text):
    ada = member("ada")
    ticket = services.create_ticket(project=project, actor=ada, title="Own ticket")
    comment(client_for(ada), ticket, text.format(outsider=outsider.username, member=manager.username))
    assert Notification.objects.count() == 0


def test_a_mention_at_the_end_of_a_sentence(client_for, ticket, member):
    ada = member("ada")
    comment(client_for(member("bob")), ticket, "Ask @ada.")
    assert [kind for kind, _ in told(ada)] == ["mention"]


def test_mentioning_oneself_tells_nobody(client_for, project, member):
    ada = member("ada")
    ticket = services.create_ticket(project=project, actor=ada, title="Own ticket")
    comment(client_for(ada), ticket, "@ada remember this")
    assert Notification.objects.count() == 0


def test_a_former_member_mentioned_is_told_nothing(client_for, ticket, manager, member):
    ada = member("ada")
    Membership.objects.filter(user=ada).delete()
    comment(client_for(member("bob")), ticket, "@ada are you there?")
    assert told(ada) == []


def test_an_edit_that_adds_a_mention_tells_only_the_newly_mentioned(client_for, ticket, manager, member):
    ada, bob, cy = member("ada"), member("bob"), member("cy")
    comment_id = comment(client_for(cy), ticket, "@ada first")
    Notification.objects.all().delete()

    edit(client_for(cy), comment_id, "@ada first, and @bob too")

    assert (told(ada), told(bob), told(manager)) == (
        [], [("mention", f"{cy.display_name} mentioned you on APL-{ticket.number}")], [])


@pytest.mark.parametrize("new_text", ["@ada first, reworded", "no mention any more", "@cy myself"])
def test_an_edit_without_a_new_mention_tells_nobody(client_for, ticket, member, new_text):
    member("ada")
    cy = member("cy")
    comment_id = comment(client_for(cy), ticket, "@ada first")
    Notification.objects.all().delete()
    edit(client_for(cy), comment_id, new_text)
    assert Notification.objects.count() == 0


# ---- status_change ------------------------------------------------------------------------

def test_a_move_tells_the_creator_and_the_assignees(client_for, ticket, manager, editor, member):
    ada = member("ada")
    ticket.assignees.set([ada, editor])
    move(client_for(editor), ticket, "done")
    expected = [("status_change", f"{editor.display_name} moved APL-{ticket.number} to Done")]
    assert (told(manager), told(ada), told(editor)) == (expected, expected, [])


def test_a_move_to_the_same_status_tells_nobody(client_for, ticket, editor):
    move(client_for(editor), ticket, "backlog")
    assert Notification.objects.count() == 0


def test_a_move_by_the_only_one_concerned_tells_nobody(client_for, ticket, manager):
    move(client_for(manager), ticket, "done")
    assert Notification.objects.count() == 0


# ---- assignment --------------------------------------------------------------------------

def test_assigning_tells_the_assigned_user(client_for, ticket, editor, member):
    ada = member("ada")
    assert assign(client_for(editor), ticket, ada).status_code == 201
    assert told(ada) == [("assignment", f"{editor.display_name} assigned you to APL-{ticket.number}")]
    assert Notification.objects.count() == 1


def test_assigning_oneself_tells_nobody(client_for, ticket, editor):
    assert assign(client_for(editor), ticket, editor).status_code == 201
    assert Notification.objects.count() == 0


def test_assigning_again_or_unassigning_tells_nobody_more(client_for, ticket, editor, member):
    ada = member("ada")
    api = client_for(editor)
    assign(api, ticket, ada)
    assign(api, ticket, ada)
    api.post(ticket_url(ticket, "unassign"), {"user_id": ada.pk}, format="json")
    assert len(told(ada)) == 1


def test_a_refused_assignment_tells_nobody(client_for, ticket, editor, outsider):
    assert assign(client_for(editor), ticket, outsider).status_code == 422
    assert Notification.objects.count() == 0


# ---- transaction and scale ---------------------------------------------------------------

def test_a_rolled_back_move_leaves_no_row_and_sends_no_frame(ticket, project, editor, manager, listen,
                                                              django_capture_on_commit_callbacks):
    listener = listen(manager)
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(RuntimeError), transaction.atomic():
        services.move_ticket(ticket=ticket, status=status_of(project, "done"), actor=editor)
        raise RuntimeError("a later step of the same transaction fails")
    assert (Notification.objects.count(), listener.frames()) == (0, [])


def test_rows_of_a_comment_rolled_back_by_a_later_step_are_gone(ticket, editor, manager, listen,
                                                                 django_capture_on_commit_callbacks):
    listener = listen(manager)
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(RuntimeError), transaction.atomic():
        services.add_comment(ticket=ticket, author=editor, message="Done")
        assert Notification.objects.count() == 1  # written inside the transaction
        raise RuntimeError("a later step of the same transaction fails")
    assert (Notification.objects.count(), listener.frames()) == (0, [])


def test_a_comment_on_a_ticket_with_50_assignees_is_one_insert(ticket, project, editor):
    assignees = [MembershipFactory(project=project, role=Role.VIEWER).user for _ in range(50)]
    ticket.assignees.set(assignees)
    with CaptureQueriesContext(connection) as queries:
        services.add_comment(ticket=ticket, author=editor, message="Status update")
    inserts = [q["sql"] for q in queries.captured_queries
               if q["sql"].startswith("INSERT") and Notification._meta.db_table in q["sql"]]
    assert len(inserts) == 1
    assert Notification.objects.filter(type="reaction").count() == 51  # the assignees and the creator


def test_the_notification_names_its_ticket_project_and_actor(ticket, project, editor, manager):
    services.add_comment(ticket=ticket, author=editor, message="Hi")
    notification = Notification.objects.get()
    assert (notification.user, notification.project, notification.ticket, notification.actor,
            notification.read_at) == (manager, project, ticket, editor, None)


def test_editing_a_comment_to_mention_a_member_through_the_service(ticket, project, member):
    ada = member("ada")
    existing = CommentFactory(ticket=ticket, author=UserFactory(), message="plain")
    MembershipFactory(project=project, user=existing.author)
    services.edit_comment(comment=existing, message="@ada now", actor=existing.author)
    assert [kind for kind, _ in told(ada)] == ["mention"]
