"""Who may open /ws/v1/projects/{id}/board/: every refusal closes the handshake before accepting it."""

from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.utils import timezone

from accounts.models import ApiToken
from accounts.services import issue_token, revoke_token

from .conftest import ASYNC_DB_TESTS, SAME_ORIGIN, bearer, cookie, is_accepted, session_of, token_of

pytestmark = ASYNC_DB_TESTS

FOREIGN_ORIGIN = [(b"host", b"testserver"), (b"origin", b"https://evil.example")]


async def test_no_credentials_refused(project):
    assert not await is_accepted(project.id, SAME_ORIGIN)


@pytest.mark.parametrize("header", [
    "Bearer",
    "Bearer " + "a" * 63,
    "Bearer " + "g" * 64,
    "Token " + "a" * 64,
    "Bearer " + "a" * 64 + " extra",
    "Bearer " + "0" * 64,  # well formed, unknown
])
async def test_malformed_or_unknown_token_refused(project, header):
    assert not await is_accepted(project.id, [(b"authorization", header.encode())])


@pytest.fixture
def revoked_token(viewer):
    token, plain = issue_token(user=viewer)
    revoke_token(token=token)
    return plain


@pytest.fixture
def expired_token(viewer):
    return issue_token(user=viewer, expires_at=timezone.now() - timedelta(seconds=1))[1]


@pytest.fixture
def token_of_inactive_user(viewer):
    _, plain = issue_token(user=viewer)
    viewer.is_active = False
    viewer.save()
    return plain


async def test_revoked_token_refused(project, revoked_token):
    assert not await is_accepted(project.id, bearer(revoked_token))


async def test_expired_token_refused(project, expired_token):
    assert not await is_accepted(project.id, bearer(expired_token))


async def test_token_of_inactive_user_refused(project, token_of_inactive_user):
    assert not await is_accepted(project.id, bearer(token_of_inactive_user))


async def test_non_member_refused(project, outsider):
    assert not await is_accepted(project.id, bearer(await token_of(outsider)))


async def test_missing_project_refused(project, manager):
    assert not await is_accepted(project.id + 1000, bearer(await token_of(manager)))


async def test_bearer_of_a_member_accepted_and_token_use_recorded(project, viewer):
    token, plain = await database_sync_to_async(issue_token)(user=viewer)
    assert await is_accepted(project.id, bearer(plain))
    assert (await ApiToken.objects.aget(pk=token.pk)).last_used_at is not None


async def test_bearer_needs_no_origin_check(project, viewer):
    assert await is_accepted(project.id, bearer(await token_of(viewer)) + FOREIGN_ORIGIN)


async def test_bad_bearer_is_not_retried_as_session(project, viewer):
    headers = [(b"authorization", b"Bearer " + b"0" * 64)] + cookie(await session_of(viewer)) + SAME_ORIGIN
    assert not await is_accepted(project.id, headers)


async def test_session_from_same_origin_accepted(project, viewer):
    assert await is_accepted(project.id, cookie(await session_of(viewer)) + SAME_ORIGIN)


async def test_session_from_foreign_origin_refused(project, viewer):
    assert not await is_accepted(project.id, cookie(await session_of(viewer)) + FOREIGN_ORIGIN)


async def test_session_without_origin_refused(project, viewer):
    assert not await is_accepted(project.id, cookie(await session_of(viewer)) + [(b"host", b"testserver")])


async def test_session_with_origin_of_a_host_not_allowed_refused(project, viewer):
    # DNS rebinding: the attacker's name points at us, so Host and Origin agree, but the name is not ours.
    rebound = [(b"host", b"evil.example"), (b"origin", b"http://evil.example")]
    assert not await is_accepted(project.id, cookie(await session_of(viewer)) + rebound)


async def test_session_origin_scheme_follows_the_proxy(project, viewer):
    behind_tls = [(b"host", b"testserver"), (b"x-forwarded-proto", b"https")]
    session = cookie(await session_of(viewer))
    assert await is_accepted(project.id, session + behind_tls + [(b"origin", b"https://testserver")])
    assert not await is_accepted(project.id, session + behind_tls + [(b"origin", b"http://testserver")])


async def test_session_from_a_trusted_origin_accepted(project, viewer, settings):
    settings.CSRF_TRUSTED_ORIGINS = ["https://tracker.example.com"]
    behind_proxy = [(b"host", b"10.0.0.5:8001"), (b"origin", b"https://tracker.example.com")]
    assert await is_accepted(project.id, cookie(await session_of(viewer)) + behind_proxy)


async def test_session_of_a_non_member_refused(project, outsider):
    assert not await is_accepted(project.id, cookie(await session_of(outsider)) + SAME_ORIGIN)


async def test_unknown_session_refused(project):
    assert not await is_accepted(project.id, cookie("x" * 32) + SAME_ORIGIN)
