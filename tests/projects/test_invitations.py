"""Invitations by e-mail through the API (managers): one sent is an e-mail, received by a real SMTP server, with
a link that opens the invitation's page; pending ones listed and revoked; a second one to the same address, or
to a member's, is a 409; a malformed address or role is a 422 that changes nothing and sends nothing."""

import re
from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from accounts.services import token_digest
from core.models import OutboundEmail
from projects.models import Invitation
from projects.roles import Role
from tests.factories import MembershipFactory, ProjectFactory, UserFactory
from tests.mail import html_of, text_of
from tests.schema import schema

from .test_member_writes import ROLE_LADDER

LINK = re.compile(r"(https?://\S+/invitations/([A-Za-z0-9_-]+)/)")


def invitations_url(project) -> str:
    return f"/api/v1/projects/{project.id}/invitations"


def revoke_url(invitation_id: int) -> str:
    return f"/api/v1/invitations/{invitation_id}/revoke"


def make_invitation(project, email: str = "grace@example.com", role: Role = Role.EDITOR, *, age=timedelta(0),
                    **state) -> Invitation:
    created = timezone.now() - age
    return Invitation.objects.create(project=project, email=email, role=role, invited_by=project.owner,
                                     digest=token_digest(f"token-of-{email}-{created.timestamp()}"),
                                     created_at=created, expires_at=created + timedelta(days=7), **state)


def shape(invitation: Invitation, inviter) -> dict:
    invitation.refresh_from_db()
    return {"id": invitation.id, "email": invitation.email, "role": invitation.role,
            "invited_by": {"id": inviter.id, "name": inviter.display_name},
            "created_at": invitation.created_at.strftime("%Y-%m-%d %H:%M:%S"),
            "expires_at": invitation.expires_at.strftime("%Y-%m-%d %H:%M:%S"),
            "accepted_at": None}


@pytest.mark.django_db(transaction=True)
class TestInvite:
    def test_a_manager_invites_and_the_address_receives_a_link_valid_seven_days(self, client_for, project, manager,
                                                                                smtp_server):
        response = client_for(manager).post(invitations_url(project), {"email": "grace@example.com",
                                                                       "role": "editor"})
        invitation = Invitation.objects.get()
        assert (response.status_code, response.json()) == (201, {"invitation": shape(invitation, manager)})
        assert invitation.expires_at - invitation.created_at == timedelta(days=7)

        [message] = smtp_server.wait_for(1)
        assert message["To"] == "grace@example.com"
        assert message["Subject"] == f"{manager.display_name} invites you to Apollo"
        link, token = LINK.search(text_of(message)).groups()
        assert link == f"{settings.SITE_URL}/invitations/{token}/"
        assert f'href="{link}"' in html_of(message)
        assert "as editor" in text_of(message)
        assert invitation.digest == token_digest(token) and token not in str(Invitation.objects.values().get())

    def test_the_same_address_again_is_409_while_pending_and_free_once_it_is_not(self, client_for, project,
                                                                                 manager, smtp_server):
        client = client_for(manager)
        first = client.post(invitations_url(project), {"email": "grace@example.com", "role": "viewer"}).json()
        response = client.post(invitations_url(project), {"email": "Grace@Example.COM", "role": "editor"})
        assert (response.status_code, response.json()) == (409, {
            "error": "email: an invitation to this address is pending", "code": "conflict", "field": "email"})
        assert Invitation.objects.count() == 1

        assert client.post(revoke_url(first["invitation"]["id"])).status_code == 200
        assert client.post(invitations_url(project), {"email": "grace@example.com", "role": "editor"}).status_code \
            == 201
        Invitation.objects.filter(revoked_at__isnull=True).update(expires_at=timezone.now())  # expired since
        assert client.post(invitations_url(project), {"email": "grace@example.com", "role": "editor"}).status_code \
            == 201
        assert len(smtp_server.wait_for(3)) == 3
        assert OutboundEmail.objects.count() == 3  # the refused one queued nothing

    def test_the_same_address_to_another_project_is_another_invitation(self, client_for, project, manager,
                                                                       smtp_server):
        other = ProjectFactory(owner=manager)
        for target in (project, other):
            assert client_for(manager).post(invitations_url(target), {"email": "grace@example.com",
                                                                     "role": "viewer"}).status_code == 201
        assert len(smtp_server.wait_for(2)) == 2

    def test_a_members_address_is_409(self, client_for, project, manager, editor):
        response = client_for(manager).post(invitations_url(project), {"email": editor.email.upper(),
                                                                       "role": "viewer"})
        assert (response.status_code, response.json()["error"]) == (409, "email: a member of the project has this "
                                                                         "address")
        assert not Invitation.objects.exists() and not OutboundEmail.objects.exists()

    def test_a_retry_with_the_same_idempotency_key_sends_one_email(self, client_for, project, manager,
                                                                   smtp_server):
        client = client_for(manager)
        body = {"email": "grace@example.com", "role": "viewer"}
        first = client.post(invitations_url(project), body, HTTP_IDEMPOTENCY_KEY="invite-grace")
        again = client.post(invitations_url(project), body, HTTP_IDEMPOTENCY_KEY="invite-grace")
        assert (again.status_code, again.json(), again["Idempotent-Replayed"]) == (201, first.json(), "true")
        assert len(smtp_server.wait_for(1)) == 1
        assert Invitation.objects.count() == OutboundEmail.objects.count() == 1

    def test_a_project_name_cannot_add_headers(self, client_for, manager, smtp_server):
        project = ProjectFactory(owner=manager, name="Apollo\r\nBcc: eve@example.com\r\nX-Evil: 1")
        assert client_for(manager).post(invitations_url(project), {"email": "grace@example.com",
                                                                   "role": "viewer"}).status_code == 201
        [message] = smtp_server.wait_for(1)
        assert message["Bcc"] is None and message["X-Evil"] is None
        assert message["Subject"] == f"{manager.display_name} invites you to Apollo Bcc: eve@example.com X-Evil: 1"
        assert smtp_server.envelopes[0][1] == ["grace@example.com"]


class TestRefusals:
    @pytest.mark.parametrize(("body", "error"), [
        ({"role": "viewer"}, "email is required"),
        ({"email": "", "role": "viewer"}, "email cannot be empty"),
        ({"email": "grace", "role": "viewer"}, "email: Enter a valid email address."),
        ({"email": "grace@example.com\r\nBcc: eve@example.com", "role": "viewer"},
         "email: Enter a valid email address."),
        ({"email": "grace@example.com, eve@example.com", "role": "viewer"}, "email: Enter a valid email address."),
        ({"email": f"{'g' * 250}@example.com", "role": "viewer"},
         "email: Ensure this field has no more than 254 characters."),
        ({"email": ["grace@example.com"], "role": "viewer"}, "email: Enter a valid email address."),
        ({"email": "grace@example.com"}, "role is required"),
        ({"email": "grace@example.com", "role": "owner"}, 'role: "owner" is not a valid choice.'),
    ])
    def test_a_bad_body_is_422_and_sends_nothing(self, client_for, project, manager, body, error):
        response = client_for(manager).post(invitations_url(project), body, format="json")
        assert (response.status_code, response.json()["error"]) == (422, error)
        assert not Invitation.objects.exists() and not OutboundEmail.objects.exists()

    @pytest.mark.parametrize(("role", "expected"), ROLE_LADDER)
    def test_only_managers_invite_list_and_revoke(self, client_for, project, member_with, role, expected):
        invitation = make_invitation(project)
        client = client_for(member_with(role))
        assert client.get(invitations_url(project)).status_code == (expected or 200)
        assert client.post(invitations_url(project), {"email": "ann@example.com", "role": "viewer"}).status_code \
            == (expected or 201)
        assert client.post(revoke_url(invitation.id)).status_code == (expected or 200)
        assert Invitation.objects.count() == (1 if expected else 2)

    def test_a_non_member_gets_404_everywhere(self, client_for, project, outsider):
        invitation = make_invitation(project)
        client = client_for(outsider)
        for response, error in [(client.get(invitations_url(project)), "project not found"),
                                (client.post(invitations_url(project), {"email": "a@example.com", "role": "viewer"}),
                                 "project not found"),
                                (client.post(revoke_url(invitation.id)), "invitation not found"),
                                (client.post(revoke_url(invitation.id + 1000)), "invitation not found")]:
            assert (response.status_code, response.json()["error"]) == (404, error)
        invitation.refresh_from_db()
        assert invitation.revoked_at is None and Invitation.objects.count() == 1

    def test_a_manager_of_another_project_cannot_revoke_this_ones(self, client_for, project):
        invitation = make_invitation(project)
        elsewhere = ProjectFactory().owner
        response = client_for(elsewhere).post(revoke_url(invitation.id))
        assert (response.status_code, response.json()["error"]) == (404, "invitation not found")
        invitation.refresh_from_db()
        assert invitation.revoked_at is None

    def test_needs_a_token(self, anonymous, project):
        invitation = make_invitation(project)
        assert anonymous.get(invitations_url(project)).status_code == 401
        assert anonymous.post(invitations_url(project), {"email": "a@example.com", "role": "viewer"}).status_code \
            == 401
        assert anonymous.post(revoke_url(invitation.id)).status_code == 401


class TestListAndRevoke:
    def test_the_list_holds_the_pending_ones_newest_first(self, client_for, project, manager, editor):
        older = make_invitation(project, "old@example.com", age=timedelta(days=2))
        newer = make_invitation(project, "new@example.com", Role.MANAGER, age=timedelta(hours=1))
        make_invitation(project, "used@example.com", accepted_at=timezone.now(), accepted_by=editor)
        make_invitation(project, "revoked@example.com", revoked_at=timezone.now())
        make_invitation(project, "expired@example.com", age=timedelta(days=7, seconds=1))
        make_invitation(ProjectFactory(), "elsewhere@example.com")
        response = client_for(manager).get(invitations_url(project))
        assert (response.status_code, response.json()) == (200, {"invitations": [shape(newer, manager),
                                                                                  shape(older, manager)]})

    def test_the_list_reads_a_fixed_number_of_queries(self, client_for, project, manager,
                                                      django_assert_max_num_queries):
        client = client_for(manager)
        inviters = [MembershipFactory(project=project, role=Role.MANAGER).user for _ in range(3)]
        for size in (2, 20):
            for index in range(size - Invitation.objects.count()):
                Invitation.objects.create(project=project, email=f"p{index}-{size}@example.com", role=Role.VIEWER,
                                          invited_by=inviters[index % 3], digest=f"{size}-{index}",
                                          expires_at=timezone.now() + timedelta(days=1))
            with django_assert_max_num_queries(4):  # token, its last use, the membership, the list
                assert len(client.get(invitations_url(project)).json()["invitations"]) == size

    def test_a_revoked_invitation_leaves_the_list_and_revoking_again_is_fine(self, client_for, project, manager):
        invitation = make_invitation(project)
        client = client_for(manager)
        response = client.post(revoke_url(invitation.id))
        assert (response.status_code, response.json()) == (200, {"success": True})
        invitation.refresh_from_db()
        assert invitation.revoked_at is not None
        assert client.get(invitations_url(project)).json() == {"invitations": []}
        assert client.post(revoke_url(invitation.id)).json() == {"success": True}

    def test_an_accepted_invitation_cannot_be_revoked(self, client_for, project, manager, editor):
        invitation = make_invitation(project, accepted_at=timezone.now(), accepted_by=editor)
        response = client_for(manager).post(revoke_url(invitation.id))
        assert (response.status_code, response.json()["error"]) == (422, "invitation: already accepted")
        invitation.refresh_from_db()
        assert invitation.revoked_at is None

    def test_a_new_user_with_a_pending_invitation_is_not_a_member_yet(self, client_for, project):
        make_invitation(project, "grace@example.com")
        grace = UserFactory(email="grace@example.com")
        assert client_for(grace).get(f"/api/v1/projects/{project.id}").status_code == 404


def test_an_invitation_takes_a_fixed_number_of_statements(client_for, project, manager,
                                                           django_assert_max_num_queries):
    client = client_for(manager)
    client.get(f"/api/v1/projects/{project.id}")  # the token's last use, written once a minute
    # token, membership, savepoint, the project's lock, a member with the address, a pending invitation to it,
    # the invitation, its e-mail in the outbox, release
    with django_assert_max_num_queries(9):
        assert client.post(invitations_url(project), {"email": "grace@example.com", "role": "viewer"}).status_code \
            == 201


def test_a_refusal_for_a_pending_invitation_is_kept_for_a_retry_as_the_reference_says(client_for, project,
                                                                                      manager):
    make_invitation(project)
    client = client_for(manager)
    body = {"email": "grace@example.com", "role": "viewer"}
    first = client.post(invitations_url(project), body, HTTP_IDEMPOTENCY_KEY="again")
    Invitation.objects.all().delete()
    again = client.post(invitations_url(project), body, HTTP_IDEMPOTENCY_KEY="again")
    assert (again.status_code, again.json(), again["Idempotent-Replayed"]) == (409, first.json(), "true")
    assert not Invitation.objects.exists()
    declared = schema()["paths"]["/api/v1/projects/{project_id}/invitations"]["post"]["responses"]["409"]
    assert set(declared["headers"]) == {"Retry-After", "Idempotent-Replayed"}
