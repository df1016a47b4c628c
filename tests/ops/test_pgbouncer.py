"""Behind PgBouncer in transaction mode (Debian's 1.18, which keeps no prepared statement between
transactions): with DATABASE_PREPARED_STATEMENTS=0 the per-request reads are plain client-side queries,
and the Procfile's server serves reads and writes from parallel clients through it."""

import os
import subprocess
import sys

import pytest
from django.db import connection

from accounts.services import issue_token
from config.settings import database_config
from core.queries import PreparedRows, rows_together
from tests.factories import ChecklistItemFactory, CommentFactory, TicketFactory
from tests.pgbouncer import PgBouncer, installed
from tests.races.test_races import in_parallel, tracebacks
from tests.realtime.servers import ROOT, ApiClient, free_port, served_database_url
from tests.security.procfile import ProcfileServer, web_command
from tickets.models import ChecklistItem, Ticket


def test_the_setting_turns_prepared_statements_and_server_side_cursors_off(monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgres://app@db.internal:6432/tracker")
    monkeypatch.delenv("DATABASE_PREPARED_STATEMENTS", raising=False)
    on = database_config()
    monkeypatch.setenv("DATABASE_PREPARED_STATEMENTS", "0")
    off = database_config()
    assert (on["OPTIONS"]["prepare_threshold"], on["DISABLE_SERVER_SIDE_CURSORS"]) == (1, False)
    assert (off["OPTIONS"]["prepare_threshold"], off["DISABLE_SERVER_SIDE_CURSORS"]) == (None, True)


def test_without_prepared_statements_the_reads_are_plain_queries(project, monkeypatch, pipelines,
                                                                  django_assert_num_queries):
    monkeypatch.setitem(connection.settings_dict, "OPTIONS",
                        {**connection.settings_dict["OPTIONS"], "prepare_threshold": None})
    ticket = TicketFactory(project=project)
    ChecklistItemFactory(ticket=ticket, done=True)
    items = PreparedRows(lambda ticket: ChecklistItem.objects.filter(ticket_id=ticket).values_list("done"))
    titles = PreparedRows(lambda ticket: Ticket.objects.filter(pk=ticket).values_list("title"))
    with django_assert_num_queries(2):
        assert rows_together((items, {"ticket": ticket.pk}), (titles, {"ticket": ticket.pk})) == [
            [(True,)], [(ticket.title,)]]
    assert pipelines == []
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_prepared_statements")
            assert cursor.fetchone() == (0,)


BEHIND_PGBOUNCER = [
    pytest.mark.postgres,
    pytest.mark.skipif(not os.environ.get("DATABASE_URL", "").startswith("postgres"),
                       reason="needs PostgreSQL (DATABASE_URL)"),
    pytest.mark.skipif(not installed(), reason="needs PgBouncer (Debian's pgbouncer; .ci/run installs it)"),
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture(scope="module")
def bouncer(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        settings = connection.settings_dict
    with PgBouncer(settings["HOST"], int(settings["PORT"] or 5432), pool_size=3) as bouncer:
        bouncer.database_url = f"postgres://{settings['USER']}@127.0.0.1:{bouncer.port}/{settings['NAME']}"
        yield bouncer


@pytest.fixture(scope="module")
def server(bouncer):
    env = {"DATABASE_URL": bouncer.database_url, "DATABASE_PREPARED_STATEMENTS": "0", "WEB_CONCURRENCY": "2",
           "REDIS_URL": os.environ.get("REDIS_URL", ""), "API_RATE_LIMIT_PER_MINUTE": "1000000"}
    with ProcfileServer(env) as server:
        yield server


@pytest.mark.usefixtures("transactional_db")
class TestBehindPgBouncer:
    pytestmark = BEHIND_PGBOUNCER

    def test_parallel_clients_read_and_write_through_it(self, server, project, manager):
        tickets = TicketFactory.create_batch(4, project=project)
        for ticket in tickets:
            CommentFactory(ticket=ticket)
            ChecklistItemFactory(ticket=ticket)
        token = issue_token(user=manager)[1]
        path = f"/api/v1/projects/{project.id}/tickets"
        first = ApiClient(server.url, token)
        expected = {ticket.number: first.request("GET", f"{path}/{ticket.number}") for ticket in tickets}
        assert {status for status, _ in expected.values()} == {200}

        def client(index: int) -> list[bool]:
            api = ApiClient(server.url, token)
            try:
                return [api.request("GET", f"{path}/{tickets[n % 4].number}") == expected[tickets[n % 4].number]
                        if n % 5 else api.request("POST", path, {"title": f"Behind PgBouncer {index}.{n}"})[0] == 201
                        for n in range(40)]
            finally:
                api.close()

        answers = in_parallel(8, client)
        assert all(all(good) for good in answers), tracebacks(server)
        numbers = sorted(Ticket.objects.filter(project=project).values_list("number", flat=True))
        assert numbers == list(range(1, 4 + 8 * 8 + 1))
        assert tracebacks(server) == ""

    def test_a_backup_through_it_is_one_moment_s(self, bouncer, project, tmp_path):
        TicketFactory.create_batch(3, project=project)
        env = {**os.environ, "DATABASE_URL": bouncer.database_url, "DATABASE_PREPARED_STATEMENTS": "0"}
        backup = subprocess.run([sys.executable, "manage.py", "backup", str(tmp_path / "backup")], cwd=ROOT, env=env,
                                capture_output=True, text=True, timeout=120)
        assert backup.returncode == 0, backup.stderr[-3000:]
        rows = (tmp_path / "backup" / "data.jsonl").read_text()
        assert rows.count('"model": "tickets.ticket"') == 3


class TestPreparedStatementsMeetAPooler:
    """With prepared statements on (the default), a pooler in transaction mode that drops them is found before a
    request fails: the server refuses to start, naming the setting, and `check --deploy` warns; PostgreSQL itself,
    or the setting turned off, passes both."""

    pytestmark = BEHIND_PGBOUNCER

    def env(self, database_url: str, **more: str) -> dict:
        return {**os.environ, "DATABASE_URL": database_url, "REDIS_URL": "", **more}

    def deploy_warnings(self, env: dict) -> str:
        result = subprocess.run([sys.executable, "manage.py", "check", "--deploy"], cwd=ROOT, env=env,
                                capture_output=True, text=True, timeout=120)
        return result.stdout + result.stderr

    def test_the_server_refuses_to_start_naming_the_setting(self, bouncer):
        env = self.env(bouncer.database_url, PORT=str(free_port()), HOST="127.0.0.1", WEB_CONCURRENCY="1")
        env.pop("DATABASE_PREPARED_STATEMENTS", None)
        started = subprocess.run(["bash", "-c", f"exec {web_command()}"], cwd=ROOT, env=env, capture_output=True,
                                 text=True, timeout=120)
        assert started.returncode != 0
        assert "set DATABASE_PREPARED_STATEMENTS=0" in started.stdout + started.stderr

    def test_check_deploy_warns_of_it(self, bouncer):
        env = self.env(bouncer.database_url)
        env.pop("DATABASE_PREPARED_STATEMENTS", None)
        assert "tracker.W001" in self.deploy_warnings(env)
        assert "tracker.W001" not in self.deploy_warnings(self.env(bouncer.database_url,
                                                                   DATABASE_PREPARED_STATEMENTS="0"))

    @pytest.mark.direct_postgres
    def test_postgresql_itself_passes(self):
        assert "tracker.W001" not in self.deploy_warnings(self.env(served_database_url()))
