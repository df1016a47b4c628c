"""The page an invitation's link opens (`/invitations/<token>/`): a logged-in user joins with a click; someone
logs in there and joins; someone new picks a username and a password (Django's validators) and gets an account
with the invited address, already a member. The link works once; a used, revoked, expired or tampered one gets
a page saying so, and does nothing. Forms carry CSRF tokens."""

import secrets
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from accounts.models import User
from accounts.services import token_digest
from projects.models import Invitation, Membership
from projects.roles import Role
from tests.factories import PASSWORD, UserFactory

from .test_invitations import LINK, invitations_url

NEW_PASSWORD = "a quiet orbit over Tycho"


@pytest.fixture
def invited(project):
    """An invitation to grace@example.com as editor, and the path its link opens."""
    token = secrets.token_urlsafe(32)
    invitation = Invitation.objects.create(project=project, email="grace@example.com", role=Role.EDITOR,
                                           invited_by=project.owner, digest=token_digest(token),
                                           expires_at=timezone.now() + timedelta(days=7))
    return invitation, f"/invitations/{token}/"


def role_of(project, user) -> str | None:
    return Membership.objects.filter(project=project, user=user).values_list("role", flat=True).first()


def new_account(username: str = "grace", password: str = NEW_PASSWORD, again: str | None = None) -> dict:
    return {"action": "new-account", "username": username, "password1": password, "password2": again or password}


def closed_page(response, reason: str, status: int) -> bool:
    return response.status_code == status and f'data-invitation-closed="{reason}"' in response.content.decode()


class TestNewPerson:
    def test_the_page_names_the_project_and_role_and_offers_both_ways_in(self, client, project, invited):
        response = client.get(invited[1])
        page = response.content.decode()
        assert response.status_code == 200 and response["Cache-Control"].startswith("max-age=0")
        assert "Join Apollo" in page and "<strong>Editor</strong>" in page and "grace@example.com" in page
        assert 'data-form="login"' in page and 'data-form="new-account"' in page
        assert page.count("csrfmiddlewaretoken") == 2

    def test_someone_new_picks_a_username_and_password_and_is_a_member(self, client, project, invited):
        invitation, path = invited
        response = client.post(path, new_account())
        assert (response.status_code, response["Location"]) == (302, f"/projects/{project.id}/board/")
        grace = User.objects.get(username="grace")
        assert (grace.email, grace.check_password(NEW_PASSWORD), role_of(project, grace)) == (
            "grace@example.com", True, "editor")
        invitation.refresh_from_db()
        assert (invitation.accepted_by, invitation.accepted_at is not None) == (grace, True)
        assert client.get(f"/projects/{project.id}/board/").status_code == 200  # logged in
        assert closed_page(client.get(path), "accepted", 410)
        assert closed_page(Client().post(path, new_account("grace2")), "accepted", 410)
        assert not User.objects.filter(username="grace2").exists()

    @pytest.mark.parametrize(("form", "error"), [
        (new_account(password="short"), "This password is too short."),
        (new_account(password="12345678901234"), "This password is entirely numeric."),
        (new_account(password="grace@example.com"), "The password is too similar to the email address."),
        (new_account(again="something else entirely"), "The two password fields didn’t match."),
        (new_account(username="bad name!"), "Enter a valid username."),
        (new_account(username=""), "This field is required."),
    ])
    def test_a_refused_form_creates_nothing(self, client, project, invited, form, error):
        response = client.post(invited[1], form)
        assert response.status_code == 200 and error in response.content.decode()
        assert not User.objects.exclude(pk=project.owner_id).exists()
        invited[0].refresh_from_db()
        assert invited[0].accepted_at is None

    def test_a_taken_username_is_refused_whatever_its_case(self, client, project, invited):
        UserFactory(username="Grace")
        response = client.post(invited[1], new_account("grace"))
        assert response.status_code == 200 and "A user with that username already exists." in \
            response.content.decode()
        invited[0].refresh_from_db()
        assert invited[0].accepted_at is None


class TestExistingUser:
    def test_a_logged_in_user_joins_with_the_invited_role(self, client, project, invited):
        lin = UserFactory()
        client.force_login(lin)
        page = client.get(invited[1]).content.decode()
        assert f"Join as {lin.display_name}" in page and 'data-form="login"' not in page
        response = client.post(invited[1], {"action": "join"})
        assert (response.status_code, response["Location"]) == (302, f"/projects/{project.id}/board/")
        assert role_of(project, lin) == "editor"

    def test_someone_logs_in_on_the_page_and_joins(self, client, project, invited):
        lin = UserFactory()
        response = client.post(invited[1], {"action": "login", "username": lin.username, "password": PASSWORD})
        assert (response.status_code, response["Location"]) == (302, f"/projects/{project.id}/board/")
        assert role_of(project, lin) == "editor"
        assert client.get(f"/projects/{project.id}/board/").status_code == 200

    def test_a_wrong_password_joins_nobody(self, client, project, invited):
        lin = UserFactory()
        response = client.post(invited[1], {"action": "login", "username": lin.username, "password": "wrong"})
        assert response.status_code == 200 and "didn't match" in response.content.decode()
        assert role_of(project, lin) is None
        invited[0].refresh_from_db()
        assert invited[0].accepted_at is None

    def test_a_member_keeps_their_role(self, client, project, manager, invited):
        client.force_login(manager)
        assert client.post(invited[1], {"action": "join"}).status_code == 302
        assert role_of(project, manager) == "manager"
        invited[0].refresh_from_db()
        assert invited[0].accepted_by == manager

    def test_a_join_without_a_login_does_nothing(self, client, project, invited):
        response = client.post(invited[1], {"action": "join"})
        assert response.status_code == 200
        invited[0].refresh_from_db()
        assert invited[0].accepted_at is None

    def test_the_forms_need_their_csrf_token(self, project, invited):
        browser = Client(enforce_csrf_checks=True)
        browser.force_login(UserFactory())
        assert browser.post(invited[1], {"action": "join"}).status_code == 403
        invited[0].refresh_from_db()
        assert invited[0].accepted_at is None


class TestClosedLinks:
    @pytest.mark.parametrize(("state", "reason"), [
        ({"revoked_at": timezone.now()}, "revoked"),
        ({"expires_at": timezone.now()}, "expired"),
    ])
    def test_a_revoked_or_expired_link_says_so_and_does_nothing(self, client, project, invited, state, reason):
        invitation, path = invited
        Invitation.objects.filter(pk=invitation.pk).update(**state)
        assert closed_page(client.get(path), reason, 410)
        assert closed_page(client.post(path, new_account()), reason, 410)
        lin = UserFactory()
        client.force_login(lin)
        assert closed_page(client.post(path, {"action": "join"}), reason, 410)
        assert not User.objects.filter(username="grace").exists() and role_of(project, lin) is None

    @pytest.mark.parametrize("change", [
        lambda token: token[:-1] + ("A" if token[-1] != "A" else "B"),  # one character changed
        lambda token: token[:-1],  # cut short
        lambda token: token + "x",
        lambda token: token[:-1] + "é",
        lambda token: "..",
    ])
    def test_a_tampered_link_is_not_valid_and_does_nothing(self, client, project, invited, change):
        token = invited[1].split("/")[2]
        path = f"/invitations/{change(token)}/"
        assert closed_page(client.get(path), "unknown", 404)
        assert closed_page(client.post(path, new_account()), "unknown", 404)
        assert "This invitation link is not valid" in client.get(path).content.decode()
        assert not User.objects.filter(username="grace").exists()

    def test_two_people_with_one_link_one_joins(self, project, invited):
        first, second = Client(), Client()
        first_page, second_page = first.get(invited[1]), second.get(invited[1])
        assert first_page.status_code == second_page.status_code == 200
        assert first.post(invited[1], new_account("grace")).status_code == 302
        assert closed_page(second.post(invited[1], new_account("hopper")), "accepted", 410)
        assert not User.objects.filter(username="hopper").exists()


@pytest.mark.django_db(transaction=True)
def test_from_the_email_to_the_board(client_for, project, manager, smtp_server):
    """The whole way: a manager invites through the API, the e-mail arrives, its link opens the page, a new
    account joins, and the invitation leaves the pending list."""
    client = client_for(manager)
    assert client.post(invitations_url(project), {"email": "grace@example.com", "role": "viewer"}).status_code == 201
    [message] = smtp_server.wait_for(1)
    link, _ = LINK.search(message.get_body(preferencelist=("plain",)).get_content()).groups()
    path = link.split("://", 1)[1].split("/", 1)[1]
    browser = Client()
    assert browser.post(f"/{path}", new_account()).status_code == 302
    grace = User.objects.get(username="grace")
    assert role_of(project, grace) == "viewer"
    assert client.get(invitations_url(project)).json() == {"invitations": []}
    assert Membership.objects.filter(project=project).count() == 2
