"""Ticket search latency on a big project in PostgreSQL, through the real HTTP stack (Django's test client).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/tracker_bench_search .venv/bin/python bench/search_bench.py
    REFILL=1 RUNS=50 ...                     # rebuild the data; repetitions per query (default 100)

Creates the database if it is missing (its name must contain "bench": a refill empties it) and fills
one project with TICKETS tickets and COMMENTS comments of generated text (a Zipf-distributed vocabulary,
so some words are everywhere and most are rare) through COPY; the data is kept for the next run. Then
times a few typical searches, each RUNS times or for QUERY_SECONDS at most, and prints p50/p95/p99 in ms,
how many tickets match, and the SQL queries per request.
"""

import os
import random
import sys
import time
from datetime import datetime, timedelta, timezone
from itertools import accumulate
from urllib.parse import urlencode, urlparse

TICKETS = int(os.environ.get("TICKETS", 100_000))
COMMENTS = int(os.environ.get("COMMENTS", 300_000))
RUNS = int(os.environ.get("RUNS", 100))
QUERY_SECONDS = 60
PROJECT_NAME = "Search benchmark"

# Real words first (the most frequent), then generated names: components, customers, error codes.
WORDS = """the a to and of in is for on with it not when after error login page user fails crash
export report invoice payment slow timeout button update api mobile sync email search filter upload
image dashboard settings password session token cache database query migration release build test
deploy server client browser safari chrome android ios notification webhook import csv pdf chart
calendar permission role admin billing subscription checkout cart order shipping address profile
avatar locale translation date timezone format validation form field modal dropdown table column
row sort pagination scroll layout css font icon dark theme memory leak cpu latency retry queue job
worker cron backup restore log audit metrics alert monitoring ssl certificate dns proxy redirect
""".split()
SYLLABLES = "ka lo mi nu re sa ti vo ze bra cle dri fro glu pla qui sto tra wex yor zin".split()


def vocabulary(rng: random.Random) -> list[str]:
    generated = {"".join(rng.choices(SYLLABLES, k=rng.randint(3, 4))) for _ in range(20_000)}
    return WORDS + sorted(generated - set(WORDS))


def sentences(rng: random.Random, words: list[str], count: int, low: int, high: int) -> list[str]:
    """`count` texts of `low` to `high` words each; the n-th word is n times rarer than the first (Zipf)."""
    sizes = [rng.randint(low, high) for _ in range(count)]
    weights = list(accumulate(1 / rank for rank in range(1, len(words) + 1)))
    pool = iter(rng.choices(words, cum_weights=weights, k=sum(sizes)))
    return [" ".join(next(pool) for _ in range(size)).capitalize() for size in sizes]


def require_bench_database() -> None:
    url = urlparse(os.environ.get("DATABASE_URL", ""))
    if not url.scheme.startswith("postgres") or "bench" not in url.path:
        sys.exit("DATABASE_URL must name a PostgreSQL database whose name contains 'bench' (a refill empties it)")


def fill() -> None:
    from django.core.management import call_command
    from django.db import connection

    from accounts.models import User
    from projects.services import create_project, set_member_role

    call_command("flush", interactive=False, verbosity=0)
    rng = random.Random(42)
    owner = User.objects.create(username="bench-owner", name="Bench Owner")
    users = [owner] + [User.objects.create(username=f"bench-user-{i}", name=f"Member {i}") for i in range(30)]
    project = create_project(owner=owner, name=PROJECT_NAME, prefix="SB")
    for user in users[1:]:
        set_member_role(project=project, user=user, role="editor")
    statuses = list(project.statuses.values_list("pk", flat=True))
    words = vocabulary(rng)
    now = datetime.now(timezone.utc)

    def moment() -> datetime:
        return now - timedelta(minutes=rng.randint(0, 2 * 365 * 24 * 60))

    titles = sentences(rng, words[20:], TICKETS, 3, 9)  # titles skip the filler words
    descriptions = sentences(rng, words, TICKETS, 0, 120)
    with connection.cursor() as cursor:
        with cursor.copy("COPY tickets_ticket (project_id, number, title, description, status_id, type, sort_order,"
                         " created_by_id, created_at, updated_at, archived_at, deleted_at, version) FROM STDIN") as copy:
            for number, (title, description) in enumerate(zip(titles, descriptions, strict=True), start=1):
                updated = moment()
                copy.write_row((project.pk, number, title[:255], description, rng.choice(statuses),
                                rng.choice(["bug", "feature", "feature", "release"]), number, rng.choice(users).pk,
                                updated - timedelta(days=rng.randint(0, 60)), updated,
                                updated if rng.random() < 0.05 else None, updated if rng.random() < 0.01 else None, 1))
        cursor.execute("UPDATE projects_project SET last_ticket_number = %s WHERE id = %s", [TICKETS, project.pk])
        cursor.execute("SELECT id FROM tickets_ticket WHERE project_id = %s ORDER BY id", [project.pk])
        ticket_ids = [row[0] for row in cursor.fetchall()]
        # A few tickets gather many comments, most have none or a couple.
        targets = rng.choices(ticket_ids, cum_weights=list(accumulate(rng.paretovariate(1.2) for _ in ticket_ids)),
                              k=COMMENTS)
        with cursor.copy("COPY tickets_comment (ticket_id, author_id, message, created_at, updated_at, deleted_at)"
                         " FROM STDIN") as copy:
            for ticket_id, message in zip(targets, sentences(rng, words, COMMENTS, 2, 40), strict=True):
                created = moment()
                copy.write_row((ticket_id, rng.choice(users).pk, message, created, created,
                                created if rng.random() < 0.02 else None))
    from board_bench import vacuum

    vacuum("tickets_ticket", "tickets_comment")



def filled() -> bool:
    from projects.models import Project
    from tickets.models import Comment, Ticket

    project = Project.objects.filter(name=PROJECT_NAME).first()
    return project is not None and (Ticket.objects.filter(project=project).count(),
                                    Comment.objects.filter(ticket__project=project).count()) == (TICKETS, COMMENTS)


def measure(client, url: str) -> tuple[list[float], dict, int]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client.get(url)  # warm up
    timings, deadline = [], time.perf_counter() + QUERY_SECONDS
    while len(timings) < RUNS and time.perf_counter() < deadline:
        with CaptureQueriesContext(connection) as queries:
            started = time.perf_counter()
            response = client.get(url)
            timings.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, response.content[:200]
    return timings, response.json(), len(queries)


def main() -> None:
    require_bench_database()
    from board_bench import ensure_database, percentile

    ensure_database()
    import django

    django.setup()
    from django.core.management import call_command
    from django.test import Client

    from accounts.models import User
    from accounts.services import issue_token
    from projects.models import Project

    call_command("migrate", verbosity=0)
    if os.environ.get("REFILL") or not filled():
        started = time.perf_counter()
        fill()
        print(f"{TICKETS} tickets and {COMMENTS} comments filled in {time.perf_counter() - started:.0f}s")
    project = Project.objects.get(name=PROJECT_NAME)
    from config.collector import tune_for_serving

    tune_for_serving()  # as config/asgi.py does in the server
    client = Client(HTTP_AUTHORIZATION=f"Bearer {issue_token(user=User.objects.get(username='bench-owner'))[1]}")
    rare = vocabulary(random.Random(42))[-1]
    searches = [
        ("common word", {"q": "error"}),
        (f"rare word ({rare})", {"q": rare}),
        ("PREFIX-n ref", {"q": f"SB-{TICKETS // 2}"}),
        ("comments only", {"q": "timeout", "in[]": "comments"}),
        ("status filter", {"q": "payment", "status[]": ["review", "done"]}),
        ("titles, archived too", {"q": "checkout", "in[]": "title", "archived": 1}),
    ]
    print(f"{'search':<32}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'runs':>6}{'total':>8}{'queries':>9}")
    for name, params in searches:
        url = f"/api/v1/projects/{project.pk}/tickets/search?{urlencode(params, doseq=True)}"
        timings, body, queries = measure(client, url)
        print(f"{name:<32}{percentile(timings, .5):>9.1f}{percentile(timings, .95):>9.1f}"
              f"{percentile(timings, .99):>9.1f}{len(timings):>6}{body['total']:>8}{queries:>9}")


if __name__ == "__main__":
    main()
