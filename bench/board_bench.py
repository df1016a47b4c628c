"""Board, list and detail latency on a big project, through the real HTTP stack (Django's test client).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/tracker_bench_board .venv/bin/python bench/board_bench.py
    .venv/bin/python bench/board_bench.py            # SQLite in a temporary file

Creates the database if it is missing, fills one project with TICKETS tickets (tags, assignees,
checklist items, comments), then times each endpoint RUNS times and prints p50/p95/p99 in ms and
the number of SQL queries per request. Rerunnable: the project is rebuilt on every run.
"""

import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DATABASE_URL", f"sqlite:///{tempfile.gettempdir()}/tracker_bench_board.sqlite3")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")  # tokens minted per run: no cap
os.environ["DJANGO_SECURE_SSL_REDIRECT"] = "0"

TICKETS = int(os.environ.get("TICKETS", 2000))
RUNS = int(os.environ.get("RUNS", 30))


def ensure_database() -> None:
    from urllib.parse import urlparse

    import psycopg

    url = urlparse(os.environ["DATABASE_URL"])
    if not url.scheme.startswith("postgres"):
        return
    admin = url._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as connection:
        name = url.path.lstrip("/")
        if not connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            connection.execute(f'CREATE DATABASE "{name}"')


def vacuum(*tables: str) -> None:
    """VACUUM ANALYZE the tables (none: the whole database), as autovacuum would have by then on a server
    that runs it (this machine's does not): the planner's statistics, the visibility map that lets a
    count read an index alone, and no dead rows left by earlier runs' writes to step over."""
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            for table in tables or [""]:
                cursor.execute(f"VACUUM ANALYZE {table}")


def fill(project, users) -> None:
    from projects.models import Tag
    from tickets.models import ChecklistItem, Comment, Ticket

    rng = random.Random(7)
    statuses = list(project.statuses.all())
    tags = Tag.objects.bulk_create(Tag(project=project, name=f"tag-{i}", sort_order=i) for i in range(12))
    tickets = Ticket.objects.bulk_create(
        Ticket(project=project, number=n, title=f"Ticket {n}: {rng.choice(['fix', 'add', 'refactor'])} things",
               status=rng.choice(statuses), created_by=rng.choice(users), sort_order=n)
        for n in range(1, TICKETS + 1)
    )
    project.last_ticket_number = TICKETS
    project.save(update_fields=["last_ticket_number"])
    Ticket.tags.through.objects.bulk_create(
        Ticket.tags.through(ticket=t, tag=tag) for t in tickets for tag in rng.sample(tags, rng.randint(0, 3)))
    Ticket.assignees.through.objects.bulk_create(
        Ticket.assignees.through(ticket=t, user=u) for t in tickets for u in rng.sample(users, rng.randint(0, 2)))
    ChecklistItem.objects.bulk_create(
        ChecklistItem(ticket=t, text="step", done=rng.random() < 0.5, sort_order=i)
        for t in tickets for i in range(rng.randint(0, 5)))
    Comment.objects.bulk_create(
        Comment(ticket=t, author=rng.choice(users), message="a comment") for t in tickets for _ in range(rng.randint(0, 4)))
    vacuum("tickets_ticket", "tickets_ticket_tags", "tickets_ticket_assignees", "tickets_checklistitem",
           "tickets_comment")


def measure(client, url: str) -> tuple[list[float], int]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client.get(url)  # warm up
    timings = []
    for _ in range(RUNS):
        with CaptureQueriesContext(connection) as queries:
            started = time.perf_counter()
            response = client.get(url)
            timings.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, response.content[:200]
    return timings, len(queries)


def percentile(values: list[float], share: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(share * 100) - 1]


def main() -> None:
    ensure_database()
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client

    from accounts.models import User
    from accounts.services import issue_token
    from projects.models import Project
    from projects.services import create_project, set_member_role

    call_command("migrate", verbosity=0)
    Project.objects.filter(name="Board benchmark").delete()
    owner, _ = User.objects.get_or_create(username="bench-owner")
    users = [owner] + [User.objects.get_or_create(username=f"bench-user-{i}")[0] for i in range(20)]
    project = create_project(owner=owner, name="Board benchmark", prefix="BB")
    for user in users[1:]:
        set_member_role(project=project, user=user, role="editor")
    started = time.perf_counter()
    fill(project, users)
    print(f"{connection.vendor}: {TICKETS} tickets filled in {time.perf_counter() - started:.1f}s; {RUNS} runs each")

    from config.collector import tune_for_serving

    tune_for_serving()  # as config/asgi.py does in the server
    client = Client(HTTP_AUTHORIZATION=f"Bearer {issue_token(user=owner)[1]}")
    middle = TICKETS // 2
    print(f"{'endpoint':<32}{'p50 ms':>10}{'p95 ms':>10}{'p99 ms':>10}{'queries':>10}")
    for name, url in [
        ("GET board", f"/api/v1/projects/{project.id}/board"),
        ("GET tickets", f"/api/v1/projects/{project.id}/tickets"),
        ("GET tickets?status=todo", f"/api/v1/projects/{project.id}/tickets?status=todo"),
        ("GET ticket detail", f"/api/v1/projects/{project.id}/tickets/{middle}"),
    ]:
        timings, queries = measure(client, url)
        print(f"{name:<32}{percentile(timings, .5):>10.1f}{percentile(timings, .95):>10.1f}"
              f"{percentile(timings, .99):>10.1f}{queries:>10}")


if __name__ == "__main__":
    main()
