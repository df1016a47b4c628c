import subprocess
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from accounts.models import ApiToken, User
from accounts.services import token_digest
from projects.models import Membership
from tests.factories import UserFactory


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue().strip().splitlines()[-1]


class TestCreateUser:
    def test_creates_an_active_user_and_prints_its_id(self, db):
        last_line = run("createuser", "ada", "--name", "Ada L", "--email", "ada@example.com", "--password", "s3cret-pw!")
        user = User.objects.get(username="ada")
        assert last_line == str(user.id)
        assert (user.name, user.email, user.is_active, user.is_staff) == ("Ada L", "ada@example.com", True, False)
        assert user.check_password("s3cret-pw!")

    def test_staff_and_superuser_flags(self, db):
        run("createuser", "boss", "--superuser")
        run("createuser", "clerk", "--staff")
        boss, clerk = User.objects.get(username="boss"), User.objects.get(username="clerk")
        assert (boss.is_superuser, boss.is_staff, clerk.is_superuser, clerk.is_staff) == (True, True, False, True)
        assert not boss.has_usable_password()

    def test_existing_username_fails(self, db):
        UserFactory(username="ada")
        with pytest.raises(CommandError, match="user 'ada' already exists"):
            run("createuser", "ada")
        assert User.objects.count() == 1

    def test_invalid_username_fails(self, db):
        with pytest.raises(CommandError, match="username"):
            run("createuser", "no spaces allowed")
        assert not User.objects.exists()


class TestIssueToken:
    def test_prints_a_token_that_authenticates(self, db, anonymous):
        UserFactory(username="ada")
        plain = run("issuetoken", "ada", "--name", "ci")
        token = ApiToken.objects.get()
        assert len(plain) == 64 and token.digest == token_digest(plain) and token.label == "ci"
        assert anonymous.get("/api/v1/projects", HTTP_AUTHORIZATION=f"Bearer {plain}").status_code == 200

    def test_unknown_or_inactive_user_fails(self, db):
        UserFactory(username="gone", is_active=False)
        with pytest.raises(CommandError, match="does not exist"):
            run("issuetoken", "nobody")
        with pytest.raises(CommandError, match="inactive"):
            run("issuetoken", "gone")
        assert not ApiToken.objects.exists()


class TestAddMember:
    def test_adds_then_changes_the_role(self, project):
        user = UserFactory(username="bob")
        assert run("addmember", str(project.id), "bob", "developer") == "developer"
        assert run("addmember", str(project.id), "bob", "viewer") == "viewer"
        assert Membership.objects.get(project=project, user=user).role == "viewer"

    def test_errors(self, project):
        UserFactory(username="bob")
        with pytest.raises(CommandError, match="project 999 does not exist"):
            run("addmember", "999", "bob", "editor")
        with pytest.raises(CommandError, match="user 'nobody' does not exist"):
            run("addmember", str(project.id), "nobody", "editor")
        with pytest.raises(CommandError, match="invalid choice"):
            run("addmember", str(project.id), "bob", "owner")
        assert Membership.objects.filter(project=project).count() == 1


class TestConfigureProject:
    def test_changes_settings(self, project):
        assert run("configureproject", str(project.id), "--docs", "off", "--estimation", "hours") == "ok"
        project.refresh_from_db()
        assert (project.docs_enabled, project.estimation_mode) == (False, "hours")
        run("configureproject", str(project.id), "--docs", "on")
        project.refresh_from_db()
        assert (project.docs_enabled, project.estimation_mode) == (True, "hours")

    def test_errors(self, project):
        with pytest.raises(CommandError, match="project 999 does not exist"):
            run("configureproject", "999", "--docs", "on")
        with pytest.raises(CommandError, match="invalid choice"):
            run("configureproject", str(project.id), "--estimation", "days")


class TestBootstrap:
    def test_first_run_creates_admin_and_token_once(self, db, anonymous):
        out = StringIO()
        call_command("bootstrap", stdout=out)
        text = out.getvalue()
        admin = User.objects.get(username="admin")
        assert admin.is_superuser
        plain = text.split("API token:")[1].split()[0]
        assert anonymous.get("/api/v1/projects", HTTP_AUTHORIZATION=f"Bearer {plain}").status_code == 200

        assert run("bootstrap") == "Accounts exist already: nothing to bootstrap. Serving http://127.0.0.1:8000/"
        assert ApiToken.objects.count() == 1

    @pytest.mark.parametrize(("host", "port", "url"), [
        ("127.0.0.1", "8000", "http://127.0.0.1:8000"),
        ("0.0.0.0", "9001", "http://127.0.0.1:9001"),  # every address: this machine's loopback is one
        ("::", "9002", "http://[::1]:9002"),
        ("192.168.1.20", "80", "http://192.168.1.20:80"),
    ])
    def test_the_banner_shows_where_the_server_listens(self, db, host, port, url):
        out = StringIO()
        call_command("bootstrap", "--host", host, "--port", port, stdout=out)
        lines = out.getvalue().splitlines()

        assert f"({url}/accounts/login/)" in lines[3]
        assert lines[5] == f"  Serving {url}/ (the API under {url}/api/v1/)"
        assert run("bootstrap", "--host", host, "--port", port) == (
            f"Accounts exist already: nothing to bootstrap. Serving {url}/")

    def test_make_run_gives_the_banner_the_host_and_port_it_serves_on(self):
        root = Path(__file__).resolve().parents[2]
        dry_run = subprocess.run(["make", "--dry-run", "--always-make", "run", "HOST=127.0.0.2", "PORT=9123"],
                                 cwd=root, capture_output=True, text=True, check=True).stdout

        assert ".venv/bin/python manage.py bootstrap --host 127.0.0.2 --port 9123" in dry_run.splitlines()
        assert "daphne -b 127.0.0.2 -p 9123 config.asgi:application" in dry_run
