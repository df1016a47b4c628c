"""A browser's sockets live as long as its session: a logout (the site's or the admin's) closes the
sockets opened with that session at once, by a message, as a revoked token's are closed; a session that
ends without one (a password changed, which ends the user's other sessions; a session expired or
cleared) is found by the periodic recheck. Token sockets and the user's other sessions are not touched. A password
reset ends every session of the user: it closes all their session sockets at once, by a message."""

import pytest
from channels.db import database_sync_to_async
from django.conf import settings
from django.contrib.auth.tokens import default_token_generator
from django.contrib.sessions.models import Session
from django.test import Client
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from accounts import consumers
from accounts.consumers import ACCESS_LOST
from tests.factories import PASSWORD, UserFactory

from .conftest import ASYNC_DB_TESTS, SAME_ORIGIN, bearer, board_socket, cookie, notification_socket, token_of

pytestmark = ASYNC_DB_TESTS

CLOSED = {"type": "websocket.close", "code": ACCESS_LOST}


@pytest.fixture
def recheck(monkeypatch):
    """Sets how often the sockets opened from then on are rechecked (by default an hour: only a message
    can close one)."""

    def every(seconds: float) -> None:
        monkeypatch.setattr(consumers, "ACCESS_RECHECK_SECONDS", seconds)

    every(3600)
    return every


@database_sync_to_async
def logged_in(user, password: str = PASSWORD, path: str = "/accounts/login/") -> Client:
    """A browser logged in through the login page, as a person does."""
    browser = Client()
    assert browser.post(path, {"username": user.username, "password": password}).status_code == 302
    return browser


def session_headers(browser: Client) -> list[tuple[bytes, bytes]]:
    return cookie(browser.cookies[settings.SESSION_COOKIE_NAME].value) + SAME_ORIGIN


@database_sync_to_async
def post(browser: Client, path: str, data: dict | None = None) -> int:
    return browser.post(path, data or {}).status_code


async def test_logging_out_closes_that_sessions_sockets_at_once(project, viewer, recheck):
    browser, elsewhere = await logged_in(viewer), await logged_in(viewer)
    async with (board_socket(project.id, session_headers(browser)) as board,
                notification_socket(session_headers(browser)) as notifications,
                board_socket(project.id, session_headers(elsewhere)) as other_session,
                board_socket(project.id, bearer(await token_of(viewer))) as token_socket):
        assert await post(browser, "/accounts/logout/") == 302

        assert await board.receive_output(timeout=1) == CLOSED
        assert await notifications.receive_output(timeout=1) == CLOSED
        assert await other_session.receive_nothing()
        assert await token_socket.receive_nothing()


async def test_logging_out_of_the_admin_closes_that_sessions_sockets(project, recheck):
    staff = await database_sync_to_async(UserFactory)(is_staff=True, is_superuser=True)
    browser = await logged_in(staff, path="/admin/login/")
    async with notification_socket(session_headers(browser)) as notifications:
        assert await post(browser, "/admin/logout/") == 302
        assert await notifications.receive_output(timeout=1) == CLOSED


async def test_a_password_changed_behind_the_services_back_ends_the_session_sockets(project, viewer, recheck):
    browser = await logged_in(viewer)
    recheck(0.05)
    async with (board_socket(project.id, session_headers(browser)) as session_socket,
                board_socket(project.id, bearer(await token_of(viewer))) as token_socket):

        @database_sync_to_async
        def change_password():
            viewer.set_password("a new one, changed in the shell")
            viewer.save()

        await change_password()
        assert await session_socket.receive_output(timeout=2) == CLOSED
        assert await token_socket.receive_nothing(timeout=0.3)


async def test_a_password_changed_in_the_admin_ends_the_users_session_sockets(project, recheck):
    staff = await database_sync_to_async(UserFactory)(is_staff=True, is_superuser=True)
    changer, other = await logged_in(staff, path="/admin/login/"), await logged_in(staff, path="/admin/login/")
    recheck(0.05)
    async with (notification_socket(session_headers(other)) as ended,
                notification_socket(bearer(await token_of(staff))) as token_socket):
        new = "Another long passphrase 42"
        assert await post(changer, f"/admin/accounts/user/{staff.pk}/password/",
                          {"password1": new, "password2": new}) == 302
        assert await ended.receive_output(timeout=2) == CLOSED
        assert await token_socket.receive_nothing(timeout=0.3)


async def test_a_session_cleared_or_expired_ends_its_sockets(project, viewer, recheck):
    browser = await logged_in(viewer)
    recheck(0.05)
    async with board_socket(project.id, session_headers(browser)) as socket:
        await Session.objects.all().adelete()  # `clearsessions`, or the admin's, or the session's expiry
        assert await socket.receive_output(timeout=2) == CLOSED


@database_sync_to_async
def reset_password(user, password: str = "a quiet orbit over Tycho") -> int:
    """A password reset from its e-mail's link (tests/accounts/test_password_reset.py follows the e-mail itself)."""
    browser = Client()
    user.refresh_from_db()  # the token is made of the last login, which the logins above moved
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    form = browser.get(f"/accounts/reset/{uid}/{default_token_generator.make_token(user)}/", follow=True)
    return browser.post(form.redirect_chain[-1][0], {"new_password1": password, "new_password2": password}).status_code


async def test_a_password_reset_closes_every_session_socket_of_the_user_at_once(project, viewer, editor, recheck):
    browsers = [await logged_in(viewer), await logged_in(viewer)]
    someone_else = await logged_in(editor)
    async with (board_socket(project.id, session_headers(browsers[0])) as board,
                notification_socket(session_headers(browsers[1])) as notifications,
                board_socket(project.id, bearer(await token_of(viewer))) as token_socket,
                board_socket(project.id, session_headers(someone_else)) as other_user):
        assert await reset_password(viewer) == 302

        assert await board.receive_output(timeout=1) == CLOSED
        assert await notifications.receive_output(timeout=1) == CLOSED
        assert await token_socket.receive_nothing()
        assert await other_user.receive_nothing()
