"""Ending access closes the open websockets at once, by a message from the service that ends it: the
periodic recheck is set to an hour here, so only the message can close them within the second."""

from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.test import Client
from django.utils import timezone

from accounts import consumers
from accounts.consumers import ACCESS_LOST
from accounts.services import issue_token, set_token_expiry, set_user_active
from projects.models import Membership
from projects.roles import Role
from projects.services import remove_member, set_member_role
from tests.factories import MembershipFactory, ProjectFactory

from .conftest import (
    ASYNC_DB_TESTS,
    SAME_ORIGIN,
    bearer,
    board_socket,
    cookie,
    notification_socket,
    send_to_board,
    session_of,
    token_of,
)

pytestmark = ASYNC_DB_TESTS

CLOSED = {"type": "websocket.close", "code": ACCESS_LOST}
FRAME = {"event": "ticket.archived", "project_id": 0, "ticket": {"id": 1}, "actor": {"id": 2, "name": "Ada"},
         "seq": 7}


@pytest.fixture(autouse=True)
def recheck_only_hourly(monkeypatch):
    monkeypatch.setattr(consumers, "ACCESS_RECHECK_SECONDS", 3600)


async def closes_within_a_second(socket) -> bool:
    return await socket.receive_output(timeout=1) == CLOSED


async def still_relays(socket, project_id: int) -> bool:
    frame = {**FRAME, "project_id": project_id}
    await send_to_board(project_id, frame)
    return await socket.receive_json_from(timeout=1) == frame


@database_sync_to_async
def browser_of(user) -> Client:
    browser = Client()
    browser.force_login(user)
    return browser


@database_sync_to_async
def post(client: Client, url: str, data: dict) -> int:
    return client.post(url, data).status_code


async def test_revoking_on_the_profile_page_closes_that_tokens_sockets_only(project, viewer):
    token, plain = await database_sync_to_async(issue_token)(user=viewer)
    browser = await browser_of(viewer)
    async with (board_socket(project.id, bearer(plain)) as board,
                notification_socket(bearer(plain)) as notifications,
                board_socket(project.id, bearer(await token_of(viewer))) as other_token,
                board_socket(project.id, cookie(await session_of(viewer)) + SAME_ORIGIN) as session):
        assert await post(browser, f"/profile/api-access/{token.pk}/revoke", {}) == 302

        assert await closes_within_a_second(board)
        assert await closes_within_a_second(notifications)
        assert await still_relays(other_token, project.id)
        assert await still_relays(session, project.id)
        assert await board.receive_nothing()


async def test_revoking_in_the_admin_closes_the_socket(project, viewer, staff):
    token, plain = await database_sync_to_async(issue_token)(user=viewer)
    async with board_socket(project.id, bearer(plain)) as board:
        response = await post(staff, "/admin/accounts/apitoken/", {"action": "revoke", "_selected_action": [token.pk]})
        assert response == 302
        assert await closes_within_a_second(board)


async def test_deleting_the_token_in_the_admin_closes_the_socket(project, viewer, staff):
    token, plain = await database_sync_to_async(issue_token)(user=viewer)
    async with board_socket(project.id, bearer(plain)) as board:
        assert await post(staff, f"/admin/accounts/apitoken/{token.pk}/delete/", {"post": "yes"}) == 302
        assert await closes_within_a_second(board)


async def test_the_socket_closes_when_its_token_expires(project, viewer):
    # The expiry leaves room for a handshake on a loaded machine (two test processes on two cores).
    expires_at = timezone.now() + timedelta(seconds=1.5)
    _, plain = await database_sync_to_async(issue_token)(user=viewer, expires_at=expires_at)
    async with board_socket(project.id, bearer(plain)) as board:
        assert await board.receive_nothing(timeout=0.3)
        assert await board.receive_output(timeout=2) == CLOSED


async def test_an_expiry_moved_to_the_past_closes_the_socket(project, viewer):
    token, plain = await database_sync_to_async(issue_token)(user=viewer,
                                                             expires_at=timezone.now() + timedelta(days=1))
    async with board_socket(project.id, bearer(plain)) as board:
        await database_sync_to_async(set_token_expiry)(token=token, expires_at=timezone.now())
        assert await closes_within_a_second(board)


async def test_an_expiry_moved_later_keeps_the_socket_open_past_the_old_one(project, viewer):
    token, plain = await database_sync_to_async(issue_token)(user=viewer,
                                                             expires_at=timezone.now() + timedelta(seconds=0.5))
    async with board_socket(project.id, bearer(plain)) as board:
        await database_sync_to_async(set_token_expiry)(token=token, expires_at=None)
        assert await board.receive_nothing(timeout=1)
        assert await still_relays(board, project.id)


async def test_changing_the_expiry_in_the_admin_reschedules_the_close(project, viewer, staff):
    token, plain = await database_sync_to_async(issue_token)(user=viewer, label="deploy")
    past = timezone.localtime() - timedelta(minutes=1)
    async with board_socket(project.id, bearer(plain)) as board:
        response = await post(staff, f"/admin/accounts/apitoken/{token.pk}/change/", {
            "label": "deploy", "expires_at_0": past.strftime("%Y-%m-%d"), "expires_at_1": past.strftime("%H:%M:%S")})
        assert response == 302
        assert await closes_within_a_second(board)


async def test_deactivating_the_user_closes_their_session_and_token_sockets(project, viewer, editor):
    session_headers = cookie(await session_of(viewer)) + SAME_ORIGIN
    async with (board_socket(project.id, session_headers) as session,
                notification_socket(bearer(await token_of(viewer))) as notifications,
                board_socket(project.id, bearer(await token_of(editor))) as colleague):
        await database_sync_to_async(set_user_active)(user=viewer, is_active=False)
        assert await closes_within_a_second(session)
        assert await closes_within_a_second(notifications)
        assert await still_relays(colleague, project.id)


async def test_deactivating_in_the_admin_closes_the_socket(project, viewer, staff):
    async with board_socket(project.id, bearer(await token_of(viewer))) as board:
        joined = timezone.localtime(viewer.date_joined)
        response = await post(staff, f"/admin/accounts/user/{viewer.pk}/change/", {
            "username": viewer.username, "email": viewer.email, "name": viewer.name,
            "date_joined_0": joined.strftime("%Y-%m-%d"), "date_joined_1": joined.strftime("%H:%M:%S"),
            # is_active unchecked: left out of the form
        })
        assert response == 302
        assert await closes_within_a_second(board)


@pytest.fixture
def second_project(viewer):
    other = ProjectFactory(name="Gemini", prefix="GEM")
    MembershipFactory(project=other, user=viewer, role=Role.VIEWER)
    return other


async def test_removing_a_member_closes_their_board_of_that_project_only(project, second_project, viewer, editor):
    plain = await token_of(viewer)
    async with (board_socket(project.id, bearer(plain)) as removed_board,
                board_socket(second_project.id, bearer(plain)) as other_board,
                notification_socket(bearer(plain)) as notifications,
                board_socket(project.id, bearer(await token_of(editor))) as colleague):
        assert await database_sync_to_async(remove_member)(project=project, user=viewer)

        assert await closes_within_a_second(removed_board)
        assert await still_relays(other_board, second_project.id)
        assert await still_relays(colleague, project.id)
        assert await notifications.receive_nothing()


async def test_deleting_the_membership_in_the_admin_closes_the_board(project, viewer, staff):
    membership = await Membership.objects.aget(project=project, user=viewer)
    async with board_socket(project.id, bearer(await token_of(viewer))) as board:
        assert await post(staff, f"/admin/projects/membership/{membership.pk}/delete/", {"post": "yes"}) == 302
        assert await closes_within_a_second(board)
    assert not await Membership.objects.filter(pk=membership.pk).aexists()


async def test_deleting_memberships_in_bulk_in_the_admin_closes_each_board(project, viewer, editor, staff):
    memberships = [membership.pk async for membership in Membership.objects.filter(user__in=[viewer, editor])]
    async with (board_socket(project.id, bearer(await token_of(viewer))) as first,
                board_socket(project.id, bearer(await token_of(editor))) as second):
        response = await post(staff, "/admin/projects/membership/",
                              {"action": "delete_selected", "_selected_action": memberships, "post": "yes"})
        assert response == 302
        assert await closes_within_a_second(first)
        assert await closes_within_a_second(second)


async def test_a_role_downgrade_keeps_the_socket(project, editor):
    async with board_socket(project.id, bearer(await token_of(editor))) as board:
        await database_sync_to_async(set_member_role)(project=project, user=editor, role=Role.VIEWER)
        assert await board.receive_nothing()
        assert await still_relays(board, project.id)
