"""A user holds at most MAX_TOKENS_PER_USER live tokens, however a token is minted: the service refuses
(a 422 rule), the profile page shows it as a form error, the admin action as a message, issuetoken
exits non-zero with it. Revoked and expired tokens leave room."""

import re
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from accounts.models import ApiToken
from accounts.services import issue_token, revoke_token
from core.errors import RuleViolation
from tests.factories import UserFactory

REFUSAL = "a user holds at most 3 live tokens: revoke one first"


@pytest.fixture(autouse=True)
def cap(settings):
    settings.MAX_TOKENS_PER_USER = 3


@pytest.fixture
def full(db):
    """A user holding as many live tokens as the cap allows."""
    user = UserFactory(username="ada")
    for index in range(3):
        issue_token(user=user, label=f"token {index}")
    return user


def test_the_service_refuses_a_token_over_the_cap(full):
    with pytest.raises(RuleViolation) as refused:
        issue_token(user=full, label="one too many")
    assert (refused.value.message, refused.value.field) == (REFUSAL, "tokens")
    assert ApiToken.objects.filter(user=full).count() == 3


def test_revoked_and_expired_tokens_leave_room(full):
    revoke_token(token=ApiToken.objects.filter(user=full).first())
    issue_token(user=full, label="fourth")
    ApiToken.objects.filter(user=full, label="fourth").update(expires_at=timezone.now() - timedelta(seconds=1))
    issue_token(user=full, label="fifth")
    assert ApiToken.objects.live().filter(user=full).count() == 3
    with pytest.raises(RuleViolation):
        issue_token(user=full)


def test_each_user_has_a_cap_of_their_own(full):
    issue_token(user=UserFactory())


def test_the_profile_page_shows_the_refusal_as_a_form_error(client, full):
    client.force_login(full)
    response = client.post("/profile/api-access/", {"label": "laptop"})
    assert response.status_code == 200
    page = response.content.decode()
    assert REFUSAL in page
    assert 'id="token-value"' not in page
    assert not ApiToken.objects.filter(label="laptop").exists()


def test_the_admin_action_issues_to_the_others_and_says_who_was_refused(staff, full):
    bob = UserFactory(username="bob")
    response = staff.post("/admin/accounts/user/",
                          {"action": "generate_api_token", "_selected_action": [full.pk, bob.pk]}, follow=True)
    page = response.content.decode()
    assert f"No token for ada: {REFUSAL}" in page
    assert len(re.findall(r'<code class="issued-token">([0-9a-f]{64})</code>', page)) == 1
    assert (ApiToken.objects.filter(user=full).count(), ApiToken.objects.filter(user=bob).count()) == (3, 1)


def test_the_admin_action_refused_for_everyone_goes_back_to_the_list(staff, full):
    response = staff.post("/admin/accounts/user/", {"action": "generate_api_token", "_selected_action": [full.pk]},
                          follow=True)
    assert response.redirect_chain[-1][0].startswith("/admin/accounts/user/")
    assert f"No token for ada: {REFUSAL}" in response.content.decode()
    assert ApiToken.objects.filter(user=full).count() == 3


def test_issuetoken_refuses_with_the_rule(full):
    """A CommandError: manage.py prints it on stderr and exits with 1."""
    with pytest.raises(CommandError, match=re.escape(REFUSAL)):
        call_command("issuetoken", "ada")
    assert ApiToken.objects.filter(user=full).count() == 3

