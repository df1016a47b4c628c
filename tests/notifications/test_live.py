"""The notification socket: who may open it, and the frame each new notification sends after commit."""


import pytest
from channels.db import database_sync_to_async
from django.utils import timezone

from accounts import consumers
from accounts.models import ApiToken
from accounts.services import issue_token, revoke_token
from notifications.models import Notification
from tests.factories import TicketFactory
from tests.realtime.conftest import (  # noqa: F401 (async_db_connections: a fixture)
    ASYNC_DB_TESTS,
    SAME_ORIGIN,
    async_db_connections,
    bearer,
    cookie,
    notification_socket,
    session_of,
    token_of,
)
from tests.tickets.conftest import ticket_url

pytestmark = ASYNC_DB_TESTS

@pytest.fixture
def ticket(project, manager):
    return TicketFactory(project=project, created_by=manager, title="Fix login")


def post(client, path: str, body: dict):
    return database_sync_to_async(client.post)(path, body, format="json")


async def test_a_comment_reaches_the_creators_socket_after_commit(client_for, project, ticket, manager, editor):
    api = await database_sync_to_async(client_for)(editor)
    async with notification_socket(bearer(await token_of(manager))) as socket:
        response = await post(api, ticket_url(ticket, "comments"), {"comment": "Done"})
        assert response.status_code == 201
        frame = await socket.receive_json_from()
        assert await socket.receive_nothing()

    notification = await Notification.objects.aget(user=manager)
    assert frame == {"event": "notification.created", "unread_count": 1, "notification": {
        "id": notification.pk, "type": "reaction", "message": f"{editor.display_name} commented on APL-{ticket.number}",
        "ticket_id": ticket.pk, "project_id": project.pk, "read_at": None,
        "created_at": notification.created_at.strftime("%Y-%m-%d %H:%M:%S"),
    }}


async def test_the_frame_counts_every_unread_notification(client_for, ticket, manager, editor):
    api = await database_sync_to_async(client_for)(editor)
    async with notification_socket(bearer(await token_of(manager))) as socket:
        await post(api, ticket_url(ticket, "comments"), {"comment": "One"})
        await post(api, ticket_url(ticket, "move"), {"status": "done"})
        frames = [await socket.receive_json_from(), await socket.receive_json_from()]
    assert [(f["notification"]["type"], f["unread_count"]) for f in frames] == [("reaction", 1), ("status_change", 2)]


async def test_each_user_hears_only_of_their_own(client_for, ticket, manager, editor, viewer):
    api = await database_sync_to_async(client_for)(editor)
    async with (notification_socket(bearer(await token_of(manager))) as creator,
                notification_socket(bearer(await token_of(viewer))) as bystander,
                notification_socket(bearer(await token_of(editor))) as actor):
        await post(api, ticket_url(ticket, "comments"), {"comment": "Done"})
        assert (await creator.receive_json_from())["event"] == "notification.created"
        assert await bystander.receive_nothing()
        assert await actor.receive_nothing()


async def test_the_browser_session_opens_the_socket_from_its_own_origin(client_for, ticket, manager, editor):
    api = await database_sync_to_async(client_for)(editor)
    async with notification_socket(cookie(await session_of(manager)) + SAME_ORIGIN) as socket:
        await post(api, ticket_url(ticket, "comments"), {"comment": "Done"})
        assert (await socket.receive_json_from())["unread_count"] == 1


FOREIGN_ORIGIN = [(b"host", b"testserver"), (b"origin", b"https://evil.example")]


@pytest.mark.parametrize("headers", ["none", "unknown token", "foreign origin session"])
async def test_a_handshake_without_a_usable_identity_is_refused(manager, headers):
    chosen = {"none": SAME_ORIGIN, "unknown token": bearer("0" * 64),
              "foreign origin session": cookie(await session_of(manager)) + FOREIGN_ORIGIN}[headers]
    async with notification_socket(chosen) as socket:
        assert socket is None


async def test_revoking_the_token_ends_the_stream(client_for, ticket, manager, editor):
    api = await database_sync_to_async(client_for)(editor)
    token, plain = await database_sync_to_async(issue_token)(user=manager)
    async with notification_socket(bearer(plain)) as socket:
        await post(api, ticket_url(ticket, "comments"), {"comment": "One"})
        assert (await socket.receive_json_from())["unread_count"] == 1

        await database_sync_to_async(revoke_token)(token=token)
        assert await socket.receive_output(timeout=1) == {"type": "websocket.close", "code": consumers.ACCESS_LOST}


async def test_a_token_revoked_behind_the_services_back_is_closed_by_the_recheck(manager, monkeypatch):
    monkeypatch.setattr(consumers, "ACCESS_RECHECK_SECONDS", 0.05)
    token, plain = await database_sync_to_async(issue_token)(user=manager)
    async with notification_socket(bearer(plain)) as socket:
        await ApiToken.objects.filter(pk=token.pk).aupdate(revoked_at=timezone.now())
        assert await socket.receive_output(timeout=2) == {"type": "websocket.close", "code": consumers.ACCESS_LOST}
