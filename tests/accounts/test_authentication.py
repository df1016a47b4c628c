from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import ApiToken
from accounts.services import issue_token, revoke_token, token_digest

URL = "/api/v1/projects"


def get_with(header: str):
    return APIClient().get(URL, HTTP_AUTHORIZATION=header)


def test_missing_token_is_401_with_challenge(anonymous, db):
    response = anonymous.get(URL)
    assert response.status_code == 401
    assert response.json() == {"code": "unauthenticated", "error": "Authentication credentials were not provided."}
    assert response["WWW-Authenticate"] == "Bearer"


@pytest.mark.parametrize("header", [
    "Token " + "a" * 64,
    "Bearer",
    "Bearer " + "a" * 63,
    "Bearer " + "g" * 64,
    "Basic dXNlcjpwYXNz",
    "Bearer " + "a" * 64 + " extra",
])
def test_malformed_header_is_401(header, db):
    response = get_with(header)
    assert response.status_code == 401
    assert "error" in response.json()


def test_unknown_token_is_401(db):
    response = get_with("Bearer " + "0" * 64)
    assert (response.status_code, response.json()) == (401, {
        "code": "unauthenticated", "error": "invalid, expired or revoked token"})


def test_valid_token_authenticates(manager):
    _, plain = issue_token(user=manager)
    assert get_with(f"Bearer {plain}").status_code == 200


def test_only_the_digest_is_stored(manager):
    token, plain = issue_token(user=manager, label="laptop")
    assert len(plain) == 64 and int(plain, 16) >= 0
    assert token.digest == token_digest(plain) != plain
    assert token.prefix == plain[:8]
    assert not ApiToken.objects.filter(digest=plain).exists()


def test_revoked_token_is_401(manager):
    token, plain = issue_token(user=manager)
    revoke_token(token=token)
    assert get_with(f"Bearer {plain}").status_code == 401


def test_expired_token_is_401(manager):
    _, plain = issue_token(user=manager, expires_at=timezone.now() - timedelta(seconds=1))
    assert get_with(f"Bearer {plain}").status_code == 401


def test_token_before_expiry_works(manager):
    _, plain = issue_token(user=manager, expires_at=timezone.now() + timedelta(days=1))
    assert get_with(f"Bearer {plain}").status_code == 200


def test_token_of_inactive_user_is_401(manager):
    _, plain = issue_token(user=manager)
    manager.is_active = False
    manager.save()
    assert get_with(f"Bearer {plain}").status_code == 401


def test_last_used_is_written_at_most_once_a_minute(manager, django_assert_num_queries):
    token, plain = issue_token(user=manager)
    assert token.last_used_at is None
    get_with(f"Bearer {plain}")
    token.refresh_from_db()
    first_use = token.last_used_at
    assert first_use is not None

    with django_assert_num_queries(2):  # token lookup and the list: no write
        get_with(f"Bearer {plain}")
    token.refresh_from_db()
    assert token.last_used_at == first_use

    ApiToken.objects.filter(pk=token.pk).update(last_used_at=first_use - timedelta(minutes=2))
    get_with(f"Bearer {plain}")
    token.refresh_from_db()
    assert token.last_used_at > first_use


def test_is_usable_agrees_with_the_usable_queryset(manager, outsider):
    """The bearer class checks a token's row in Python; sockets and the admin filter with usable()."""
    now = timezone.now()
    tokens = [issue_token(user=manager)[0], issue_token(user=manager, expires_at=now + timedelta(days=1))[0],
              issue_token(user=manager, expires_at=now - timedelta(seconds=1))[0], issue_token(user=outsider)[0]]
    revoke_token(token=issue_token(user=manager)[0])
    outsider.is_active = False
    outsider.save()
    usable = set(ApiToken.objects.usable().values_list("pk", flat=True))
    assert [token.pk in usable for token in ApiToken.objects.select_related("user")] == [
        token.is_usable for token in ApiToken.objects.select_related("user")]
    assert usable == {tokens[0].pk, tokens[1].pk}
