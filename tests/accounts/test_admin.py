import re

from django.utils import timezone

from accounts.models import ApiToken
from accounts.services import issue_token
from tests.factories import ProjectFactory, UserFactory


def test_generate_action_shows_each_token_once(staff, anonymous):
    ada, bob = UserFactory(), UserFactory()
    response = staff.post("/admin/accounts/user/", {"action": "generate_api_token", "_selected_action": [ada.pk, bob.pk]})

    assert response.status_code == 200
    tokens = re.findall(r'<code class="issued-token">([0-9a-f]{64})</code>', response.content.decode())
    assert len(tokens) == 2
    assert {token.user for token in ApiToken.objects.all()} == {ada, bob}
    for plain in tokens:
        assert anonymous.get("/api/v1/projects", HTTP_AUTHORIZATION=f"Bearer {plain}").status_code == 200


def test_token_pages_never_show_the_digest(staff):
    token, plain = issue_token(user=UserFactory(), label="deploy")
    for url in ("/admin/accounts/apitoken/", f"/admin/accounts/apitoken/{token.pk}/change/"):
        page = staff.get(url).content.decode()
        assert "deploy" in page
        assert token.digest not in page and plain not in page


def test_revoke_action(staff, anonymous):
    token, plain = issue_token(user=UserFactory())
    response = staff.post("/admin/accounts/apitoken/", {"action": "revoke", "_selected_action": [token.pk]})
    assert response.status_code == 302
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert anonymous.get("/api/v1/projects", HTTP_AUTHORIZATION=f"Bearer {plain}").status_code == 401


def test_token_list_filters_by_state(staff):
    live, _ = issue_token(user=UserFactory(), label="live-one")
    dead, _ = issue_token(user=UserFactory(), label="dead-one")
    dead.revoked_at = dead.created_at
    dead.save()
    page = staff.get("/admin/accounts/apitoken/?state=active").content.decode()
    assert "live-one" in page and "dead-one" not in page


def test_admin_lists_are_searchable(staff):
    ProjectFactory(name="Searchable Apollo")
    assert b"Searchable Apollo" in staff.get("/admin/projects/project/?q=apollo").content
    assert staff.get("/admin/accounts/user/?q=user").status_code == 200
    project = ProjectFactory()
    assert staff.get(f"/admin/projects/project/{project.pk}/change/").status_code == 200


def test_an_avatar_address_without_a_scheme_is_taken_as_https(staff):
    user = UserFactory()
    joined = timezone.localtime(user.date_joined)
    response = staff.post(f"/admin/accounts/user/{user.pk}/change/", {
        "username": user.username, "email": user.email, "name": "Ada", "avatar_url": "example.com/ada.png",
        "is_active": "on", "date_joined_0": joined.strftime("%Y-%m-%d"), "date_joined_1": joined.strftime("%H:%M:%S")})
    assert response.status_code == 302
    user.refresh_from_db()
    assert (user.name, user.avatar_url) == ("Ada", "https://example.com/ada.png")
