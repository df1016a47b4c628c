"""The figures of `make bench`, one function each, returning {figure, value, goal, baseline, details}."""

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from unittest import mock
from urllib.parse import urlencode

import orjson

from config.collector import tune_for_serving

ROOT = Path(__file__).resolve().parent.parent
SMALL = bool(os.environ.get("BENCH_SMALL"))
SERVER_URL = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432")
REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/5")
# Appended to every benchmark database's name, so that engineers sharing a server keep their data apart.
DATABASE_SUFFIX = os.environ.get("BENCH_DATABASE_SUFFIX", "")


def database_url(name: str) -> str:
    """The PostgreSQL URL of the benchmark database `name`."""
    return f"{SERVER_URL}/tracker_bench_{name}{DATABASE_SUFFIX}"
BOARD_SIZES = (20, 200) if SMALL else (2_000, 20_000)


def setup(database: str) -> None:
    """Django against tracker_bench_<database> (or a temporary SQLite file when small), migrated."""
    if SMALL:
        url = f"sqlite:///{tempfile.gettempdir()}/tracker_bench_{database}_{os.getpid()}.sqlite3"
    else:
        url = database_url(database)
    os.environ["DATABASE_URL"] = url
    # Not a default: importing `config` (this module does) has already named config.settings for its Celery app,
    # and the figures, which mint a token per run into databases kept from one run to the next, reached its cap.
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings"
    os.environ["DJANGO_SECURE_SSL_REDIRECT"] = "0"
    sys.path.insert(0, str(ROOT / "bench"))
    from board_bench import ensure_database, vacuum

    ensure_database()
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    vacuum()  # what earlier figures wrote (creations, tokens, moves)


def p50(function, runs: int, warm_up: bool = True) -> float:
    if warm_up:
        function()
    timings = []
    for _ in range(runs):
        started = time.perf_counter()
        function()
        timings.append((time.perf_counter() - started) * 1000)
    return statistics.median(timings)


def paired_p50(functions: dict, runs: int) -> dict[str, float]:
    """p50 of each function, their runs taken in turns: on a machine whose speed drifts from one second to
    the next, a figure and the one it is divided by are then measured under the same conditions."""
    timings = {name: [] for name in functions}
    for function in functions.values():
        function()  # warm up
    for _ in range(runs):
        for name, function in functions.items():
            started = time.perf_counter()
            function()
            timings[name].append((time.perf_counter() - started) * 1000)
    return {name: statistics.median(values) for name, values in timings.items()}


def ratio(a: float, b: float) -> float:
    return round(a / b, 2)


# ---- board ------------------------------------------------------------------------------------

def board_project(size: int):
    """A project of `size` tickets from a fixed seed, made once and kept in the benchmark database."""
    from board_bench import fill

    from accounts.models import User
    from projects.models import Project
    from projects.services import create_project, set_member_role
    from tickets.models import Ticket

    name = f"Board {size}"
    project = Project.objects.filter(name=name).first()
    if project is not None and Ticket.objects.filter(project=project).count() == size:
        return project
    Project.objects.filter(name=name).delete()
    owner, _ = User.objects.get_or_create(username="bench-owner")
    users = [owner] + [User.objects.get_or_create(username=f"bench-user-{i}", defaults={"name": f"Member {i}"})[0]
                       for i in range(20)]
    project = create_project(owner=owner, name=name, prefix="BB")
    for user in users[1:]:
        set_member_role(project=project, user=user, role="editor")
    import board_bench

    board_bench.TICKETS = size
    fill(project, users)
    return project


def owner_client():
    from django.test import Client

    from accounts.models import User
    from accounts.services import issue_token

    return Client(HTTP_AUTHORIZATION=f"Bearer {issue_token(user=User.objects.get(username='bench-owner'))[1]}")


def owner_membership(project):
    from projects.models import Membership

    return Membership.objects.select_related("project").get(project=project, user__username="bench-owner")


@contextmanager
def legacy_api():
    """The board as built and rendered before issue 14 (bench/legacy.py), through the same HTTP stack."""
    from bench import legacy

    with (mock.patch("tickets.views.tickets.board_payload", lambda head: legacy.board_payload(membership=head.membership)),
          mock.patch("tickets.views.search.search_tickets", legacy.search_tickets),
          mock.patch("tickets.views.search.search_shapes", legacy.search_shapes),
          mock.patch("rest_framework.views.APIView.renderer_classes", [legacy.LegacyRenderer])):
        yield


def board_floor(membership) -> bytes:
    """The board's bytes from two hand-written SQL queries for its cards, its head read by the same selectors,
    and orjson (which renders the board too): what the board cannot beat."""
    from django.db import connection

    from projects.selectors import project_members, project_statuses, project_tags
    from projects.serializers import MemberOutput, TagOutput
    from tickets.selectors import velocity

    project = membership.project
    ticket_sql = (
        "SELECT t.id, t.number, t.title, s.slug, t.type, t.priority, t.deadline, {ts}, t.created_by_id, u.name, "
        "u.username, (SELECT COUNT(*) FROM tickets_comment c WHERE c.ticket_id = t.id AND c.deleted_at IS NULL), "
        "(SELECT COUNT(*) FROM tickets_checklistitem i WHERE i.ticket_id = t.id), "
        "(SELECT COUNT(*) FROM tickets_checklistitem i WHERE i.ticket_id = t.id AND i.done) "
        "FROM tickets_ticket t JOIN projects_status s ON s.id = t.status_id JOIN accounts_user u ON u.id = "
        "t.created_by_id WHERE t.project_id = %s AND t.deleted_at IS NULL AND t.archived_at IS NULL "
        "ORDER BY t.sort_order, t.id")
    timestamp = ("to_char(t.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')"
                 if connection.vendor == "postgresql" else "substr(t.created_at, 1, 19)")
    # Each ticket's tags in the project's tag order, then its assignees by id.
    pairs_sql = (
        "SELECT 0, x.ticket_id, g.id, g.name, g.color, NULL, g.sort_order FROM tickets_ticket_tags x JOIN projects_tag g "
        "ON g.id = x.tag_id JOIN tickets_ticket t ON t.id = x.ticket_id WHERE t.project_id = %s "
        "UNION ALL SELECT 1, y.ticket_id, u.id, u.name, u.username, u.avatar_url, 0 FROM tickets_ticket_assignees y "
        "JOIN accounts_user u ON u.id = y.user_id JOIN tickets_ticket t ON t.id = y.ticket_id WHERE t.project_id = %s "
        "ORDER BY 1, 7, 3")
    with connection.cursor() as cursor:
        cursor.execute(ticket_sql.format(ts=timestamp), [project.pk])
        rows = cursor.fetchall()
        cursor.execute(pairs_sql, [project.pk, project.pk])
        pairs = cursor.fetchall()
    tags, assignees = {}, {}
    for kind, ticket_id, pk, name, other, extra, _ in pairs:
        if kind == 0:
            tags.setdefault(ticket_id, []).append({"id": pk, "name": name, "color": other})
        else:
            assignees.setdefault(ticket_id, []).append({"id": pk, "name": name or other, "avatar": extra or None})
    statuses = list(project_statuses(project=project))
    columns = {status.slug: [] for status in statuses}
    for (pk, number, title, slug, type_, priority, deadline, created, creator, name, username, reactions, total,
         done) in rows:
        columns[slug].append({
            "id": pk, "project_ticket_number": number, "prefix_ref": f"{project.prefix}-{number}", "title": title,
            "status": slug, "type": type_, "priority": priority, "deadline": deadline and deadline.isoformat(),
            "tags": tags.get(pk, []), "created_at": created, "assignees": assignees.get(pk, []),
            "creator": {"id": creator, "name": name or username}, "reaction_count": reactions,
            "checklist_total": total, "checklist_done": done})
    return orjson.dumps({
        "project": {"id": project.id, "name": project.name, "prefix": project.prefix,
                    "estimation_mode": project.estimation_mode, "role": membership.role,
                    "docs_enabled": project.docs_enabled},
        "columns": [{"status": status.slug, "hidden": status.hidden, "tickets": columns[status.slug]}
                    for status in statuses],
        "tags": TagOutput(project_tags(project=project), many=True).data,
        "members": MemberOutput(project_members(project=project), many=True).data,
        "velocity": velocity(project=project)})


def _legacy_board_time(project, runs: int) -> float:
    client = owner_client()
    with legacy_api():
        # The old board at 20,000 tickets takes seconds: the runs after the first are warm enough.
        return p50(lambda: client.get(f"/api/v1/projects/{project.pk}/board"), runs, warm_up=runs > 2)


def board() -> dict:
    setup("board")
    small, _ = BOARD_SIZES
    project = board_project(small)
    tune_for_serving()  # as config/asgi.py does in the server
    client, url = owner_client(), f"/api/v1/projects/{project.pk}/board"
    membership = owner_membership(project)
    assert board_floor(membership) == client.get(url).content, "the floor must give the board's own bytes"
    now, floor = paired_p50({"now": lambda: client.get(url), "floor": lambda: board_floor(membership)},
                            5 if SMALL else 20).values()
    with legacy_api():
        before = p50(lambda: client.get(url), 3 if SMALL else 10)
    return {"figure": f"board p50 at {small:,} tickets ÷ floor", "value": f"{ratio(now, floor)}×",
            "goal": "≤ 1.2×", "baseline": f"{ratio(before, floor)}×",
            "details": f"board {now:.0f} ms (before: {before:.0f} ms); floor (the same bytes from 2 SQL queries for "
                       f"the cards + orjson) {floor:.0f} ms"}


def growth() -> dict:
    setup("board")
    small, large = BOARD_SIZES
    small_project, large_project = board_project(small), board_project(large)
    tune_for_serving()
    client = owner_client()
    at_small, at_large = paired_p50({size: lambda project=project: client.get(f"/api/v1/projects/{project.pk}/board")
                                     for size, project in (("small", small_project), ("large", large_project))},
                                    3 if SMALL else 9).values()
    before_small, before_large = _legacy_board_time(small_project, 3 if SMALL else 5), _legacy_board_time(large_project, 2)
    return {"figure": f"board growth {small:,} → {large:,} tickets", "value": f"{ratio(at_large, at_small)}× the time",
            "goal": "≤ 10×, under 1 s p50", "baseline": f"{ratio(before_large, before_small)}× the time",
            "details": f"{large:,} tickets: {at_large:.0f} ms p50 (before: {before_large:.0f} ms); the two sizes "
                       "measured in turns"}


# ---- servers ----------------------------------------------------------------------------------

def _server_env() -> dict[str, str]:
    """The servers' database, and Redis for the rate limiter's counters and the channel layer, as in production;
    a limit that a throughput run does not reach (each request is still counted)."""
    return {"DATABASE_URL": os.environ["DATABASE_URL"], "REDIS_URL": "" if SMALL else REDIS_URL,
            "API_RATE_LIMIT_PER_MINUTE": str(10**9), "API_USER_RATE_LIMIT_PER_MINUTE": str(10**9)}


def _taking_turns(servers, requests: dict, *, clients: int, seconds: float, turns: int = 4) -> dict[str, float]:
    """Requests per second for each kind of request, sent in `turns` bursts each, taking turns: the machine's
    drifting speed then weighs on each alike. Every answer must be a 200."""
    from bench.load import hammer

    done, elapsed = dict.fromkeys(requests, 0), dict.fromkeys(requests, 0.0)
    for _ in range(turns):
        for name, make_request in requests.items():
            run = hammer(servers, make_request, clients=clients, seconds=seconds / turns)
            assert set(run["statuses"]) == {200}, (name, run["statuses"])
            done[name] += run["done"]
            elapsed[name] += run["done"] / run["per_second"]
    return {name: done[name] / elapsed[name] for name in requests}


def _token() -> str:
    from accounts.models import User
    from accounts.services import issue_token

    return issue_token(user=User.objects.get(username="bench-owner"))[1]


def detail() -> dict:
    from bench.load import Servers, hammer

    setup("board")
    project = board_project(BOARD_SIZES[0])
    headers = {"Authorization": f"Bearer {_token()}"}
    seconds, clients = (1, 2) if SMALL else (8, 16)
    numbers = list(range(1, BOARD_SIZES[0] + 1))
    rng = random.Random(3)
    results = {}
    for kind in ["daphne", "gunicorn"]:
        with Servers(kind, _server_env()) as servers:
            requests = {
                "trivial": lambda: ("GET", "/bench/trivial", {}, b""),
                "ticket": lambda: ("GET", f"/api/v1/projects/{project.pk}/tickets/{rng.choice(numbers)}", headers,
                                   b"")}
            for make_request in requests.values():  # warm up: each process's first requests compile and connect
                hammer(servers, make_request, clients=clients, seconds=1)
            rates = _taking_turns(servers, requests, clients=clients, seconds=seconds)
            results[kind] = (rates["ticket"], rates["trivial"])
    (gd, gt), (dd, dt) = results["gunicorn"], results["daphne"]
    return {"figure": "ticket detail throughput ÷ trivial JSON view, same server (2 processes)",
            "value": f"{ratio(gd, gt)} (gunicorn+uvicorn)", "goal": "≥ 0.5",
            "baseline": f"{ratio(dd, dt)} (daphne)",
            "details": f"gunicorn+uvicorn: detail {gd:.0f}/s, trivial {gt:.0f}/s; daphne: detail {dd:.0f}/s, "
                       f"trivial {dt:.0f}/s; {clients} keep-alive clients, {seconds} s of each in 4 turns"}


def creates() -> dict:
    from bench.load import Servers, hammer

    setup("board")
    board_project(BOARD_SIZES[0])
    from accounts.models import User
    from projects.models import Project
    from projects.services import create_project
    from tickets.models import Ticket

    headers = {"Authorization": f"Bearer {_token()}", "Content-Type": "application/json"}
    body = json.dumps({"title": "Created under load", "tags": []}).encode()
    seconds, limit = (1, 50) if SMALL else (8, 3000)
    results = {}
    for kind in ["daphne", "gunicorn"]:
        Project.objects.filter(name=f"Creates {kind}").delete()
        project = create_project(owner=User.objects.get(username="bench-owner"), name=f"Creates {kind}",
                                 prefix="CR")
        path = f"/api/v1/projects/{project.pk}/tickets"
        with Servers(kind, _server_env()) as servers:
            request = ("POST", path, headers, body)
            run = hammer(servers, lambda request=request: request, clients=16, seconds=seconds, limit=limit)
        numbers = list(Ticket.objects.filter(project=project).values_list("number", flat=True))
        results[kind] = (run["per_second"], len(numbers) - len(set(numbers)),
                         sum(count for status, count in run["statuses"].items() if status >= 500))
    (g, g_dup, g_5xx), (d, d_dup, d_5xx) = results["gunicorn"], results["daphne"]
    return {"figure": "concurrent ticket creates, 16 clients", "value": f"{g:.0f}/s (gunicorn+uvicorn), "
            f"{g_dup} duplicates, {g_5xx} 5xx", "goal": "≥ 150/s, 0 duplicates, 0 5xx",
            "baseline": f"{d:.0f}/s (daphne), {d_dup} duplicates, {d_5xx} 5xx",
            "details": f"one project (each creation holds its row from the number to the commit), {seconds} s; "
                       "a psycopg pool of up to 10 connections per process"}


# ---- search -----------------------------------------------------------------------------------

def search() -> dict:
    sys.path.insert(0, str(ROOT / "bench"))
    import search_bench

    if SMALL:
        search_bench.TICKETS, search_bench.COMMENTS = 300, 900
    setup("search")
    from django.db import connection

    from bench import legacy
    from projects.models import Project
    from tickets.search import SEARCH_FIELDS, Scope, _probe, referenced_number

    if not search_bench.filled():
        if connection.vendor == "postgresql":
            search_bench.fill()
        else:
            _fill_small_search(search_bench)
    project = Project.objects.get(name=search_bench.PROJECT_NAME)
    tune_for_serving()
    client = owner_client()
    rare = search_bench.vocabulary(random.Random(42))[-1]
    runs = 5 if SMALL else 30

    def url(query):
        return f"/api/v1/projects/{project.pk}/tickets/search?{urlencode({'q': query})}"

    def get(query):
        response = client.get(url(query))
        assert response.status_code == 200
        return response.json()

    sql, params = legacy.ranked_ids(project=project, query=rare, fields={"title", "description", "comments"}
                                    ).query.sql_with_params()

    def by_hand():
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            cursor.fetchall()

    def probe():  # the search's own finding and counting of the matches: the work the hand SQL does
        _probe(Scope.of(project), rare, set(SEARCH_FIELDS), referenced_number(project=project, query=rare))

    hand, found, now = paired_p50({"hand": by_hand, "probe": probe, "now": lambda: get(rare)}, runs).values()
    common = p50(lambda: get("error"), max(3, runs // 3))
    body = get("error")
    with legacy_api():
        before = p50(lambda: get(rare), runs)
        common_before = p50(lambda: get("error"), max(3, runs // 6))
        total_before = get("error")["total"]
    return {"figure": f"search p50, {search_bench.TICKETS:,} tickets / {search_bench.COMMENTS:,} comments, rare "
                      "word ÷ the same SQL by hand", "value": f"{ratio(now, hand)}× ({now:.0f} ms)",
            "goal": "≤ 1.5×", "baseline": f"{ratio(before, hand)}× ({before:.0f} ms)",
            "details": f"hand SQL {hand:.1f} ms; the search's probe (the same matches found and counted) "
                       f"{found:.1f} ms, the rest of the request (its page, excerpts, token, membership, JSON) "
                       f"{now - found:.1f} ms; common word `error`: {common:.0f} ms, total {body['total']} "
                       f"(capped: {str(body['total_capped']).lower()}; before: {common_before:.0f} ms, exact total "
                       f"{total_before})"}


def _fill_small_search(search_bench) -> None:
    """The generator's vocabulary and shape, through the ORM (SQLite has no COPY)."""
    from accounts.models import User
    from projects.services import create_project
    from tickets.models import Comment, Ticket

    rng = random.Random(42)
    owner, _ = User.objects.get_or_create(username="bench-owner")
    project = create_project(owner=owner, name=search_bench.PROJECT_NAME, prefix="SB")
    words, status = search_bench.vocabulary(rng), project.statuses.first()
    titles = search_bench.sentences(rng, words[20:], search_bench.TICKETS, 3, 9)
    titles[-1] += f" {words[-1]}"  # the rare word, found once
    tickets = Ticket.objects.bulk_create(
        Ticket(project=project, number=n, title=title, description=description, status=status, created_by=owner)
        for n, (title, description) in enumerate(zip(titles, search_bench.sentences(
            rng, words, search_bench.TICKETS, 0, 120), strict=True), start=1))
    Comment.objects.bulk_create(Comment(ticket=rng.choice(tickets), author=owner, message=message)
                                for message in search_bench.sentences(rng, words, search_bench.COMMENTS, 2, 40))


# ---- websockets -------------------------------------------------------------------------------

def fanout() -> dict:
    """The production server (the Procfile's gunicorn with uvicorn workers) on PostgreSQL and Redis, 2 worker
    processes; small: one worker on SQLite with the in-memory layer."""
    viewers, moves, processes = (25, 5, 1) if SMALL else (500, 20, 2)  # more than a user's 20 sockets
    env = {**os.environ, "VIEWERS": str(viewers), "MOVES": str(moves), "REDIS_URL": "" if SMALL else REDIS_URL,
           "DATABASE_URL": "" if SMALL else database_url("fanout")}
    process = subprocess.run([sys.executable, "bench/ws_fanout.py", "--processes", str(processes)], cwd=ROOT,
                             env=env, capture_output=True, text=True, timeout=400, check=True)
    result = json.loads(process.stdout[process.stdout.index("{"):])
    database = "SQLite" if SMALL else "PostgreSQL"
    return {"figure": f"{viewers} websocket viewers, {result['layer']} layer, {processes} processes", "value":
            f"{result['frames_lost']} lost, p99 {result['latency_ms_p99']:.0f} ms, "
            f"{result['server_kib_per_connection']:.0f} KiB per connection",
            "goal": "0 lost, p99 < 150 ms, < 64 KiB per connection", "baseline": "0 lost, p99 ~120 ms (issue 14)",
            "details": f"p50 {result['latency_ms_p50']:.0f} ms, last viewer p99 {result['last_viewer_ms_p99']:.0f} ms,"
                       f" {moves} moves after an untimed one on each worker; gunicorn + {processes} uvicorn workers on"
                       f" one port (the Procfile's server), {database}; memory summed over the workers; the viewers"
                       " read in one client process"}


# ---- integrator conventions (issue 23) ---------------------------------------------------------

def pages() -> dict:
    """A page of 100 at the end of a 20,000-ticket list against one at its start: keyset pages."""
    setup("board")
    from django.http import QueryDict

    from accounts.models import User
    from tickets.filters import ticket_list_query
    from tickets.models import Ticket

    _, large = BOARD_SIZES
    project = board_project(large)
    tune_for_serving()
    client, url = owner_client(), f"/api/v1/projects/{project.pk}/tickets"
    page = 10 if SMALL else 100
    last = Ticket.objects.active().filter(project=project).order_by("-sort_order", "-id").values("sort_order", "id")
    before_the_last_page = last[page]
    query = ticket_list_query(QueryDict(f"limit={page}"), project=project,
                              user=User.objects.get(username="bench-owner"))
    end = f"{url}?limit={page}&cursor={query.cursor_after(before_the_last_page)}"
    timings = paired_p50({"start": lambda: client.get(f"{url}?limit={page}"), "end": lambda: client.get(end)},
                         5 if SMALL else 30)
    assert client.get(f"{url}?limit={page}").json()["next_cursor"] and client.get(end).json()["next_cursor"] is None
    return {"figure": f"a page of {page} at the end of a {large:,}-ticket list ÷ one at its start",
            "value": f"{ratio(timings['end'], timings['start'])}×", "goal": "≤ 1.5×",
            "baseline": "the whole list: " + f"{p50(lambda: client.get(url), 2 if SMALL else 3):.0f} ms",
            "details": f"start {timings['start']:.1f} ms, end {timings['end']:.1f} ms p50 (keyset on "
                       "ticket_list_idx), in turns"}


def etag() -> dict:
    """A 304 for an unchanged 20,000-card board against the full board."""
    setup("board")
    _, large = BOARD_SIZES
    project = board_project(large)
    tune_for_serving()
    client, url = owner_client(), f"/api/v1/projects/{project.pk}/board"
    tag = client.get(url)["ETag"]
    assert client.get(url, HTTP_IF_NONE_MATCH=tag).status_code == 304
    timings = paired_p50({"full": lambda: client.get(url), "304": lambda: client.get(url, HTTP_IF_NONE_MATCH=tag)},
                         3 if SMALL else 9)
    return {"figure": f"a 304 for an unchanged {large:,}-card board ÷ the full board",
            "value": f"{ratio(timings['304'], timings['full'])}", "goal": "< 0.1",
            "baseline": f"full board {timings['full']:.0f} ms",
            "details": f"304 in {timings['304']:.1f} ms: the ETag comes from the project's event seq, its columns, "
                       "tags, members and velocity, never from the cards"}


def moves() -> dict:
    """Relative moves into a 2,000-card column against a 20-card one: positions with gaps."""
    setup("board")
    from projects.models import Project
    from projects.services import create_project
    from tickets.models import Ticket
    from tickets.services.positions import GAP

    owner = board_project(BOARD_SIZES[0]).owner
    Project.objects.filter(name="Moves").delete()
    project = create_project(owner=owner, name="Moves", prefix="MV")
    sizes = {"small": 20, "large": 20 if SMALL else 2_000}
    columns = {}
    for (name, size), status in zip(sizes.items(), project.statuses.order_by("sort_order")[1:], strict=False):
        first = Project.objects.advance_counters(project.pk, last_ticket_number=size)["last_ticket_number"] - size + 1
        columns[name] = (status, Ticket.objects.bulk_create(
            Ticket(project=project, number=first + index, title=f"{name} {index}", status=status, created_by=owner,
                   sort_order=index * GAP) for index in range(size)))
    tune_for_serving()
    client, rng = owner_client(), random.Random(7)

    def move_into(name):
        status, tickets = columns[name]
        ticket, anchor = rng.sample(tickets, 2)
        response = client.post(f"/api/v1/projects/{project.pk}/tickets/{ticket.number}/move",
                               {"status": status.slug, "before_id": anchor.pk}, content_type="application/json")
        assert response.status_code == 200, response.content

    timings = paired_p50({name: lambda name=name: move_into(name) for name in sizes}, 10 if SMALL else 60)
    return {"figure": f"a relative move in a {sizes['large']:,}-card column ÷ in a 20-card one",
            "value": f"{ratio(timings['large'], timings['small'])}×", "goal": "about 1× (equal query counts: tested)",
            "baseline": f"20 cards: {timings['small']:.1f} ms",
            "details": f"{sizes['large']:,} cards: {timings['large']:.1f} ms p50; a random ticket before a random "
                       "one of the same column, in turns"}


def moves_together() -> dict:
    """Relative moves by 16 clients at once in one project, where each queues for the project's row from its
    frame's number to its commit, against the same moves spread over 16 projects (no queue)."""
    from bench.load import Servers

    setup("board")
    owner = board_project(BOARD_SIZES[0]).owner
    size, seconds = (20, 1) if SMALL else (300, 8)
    projects = [_project_of_one_column(owner, f"Moves together {n}", size) for n in range(16)]
    headers = {"Authorization": f"Bearer {_token()}", "Content-Type": "application/json"}
    rng = random.Random(11)

    def moves_in(chosen):
        def request():
            project, cards = rng.choice(chosen)
            (number, _), (_, anchor) = rng.sample(cards, 2)
            body = json.dumps({"status": "todo", "before_id": anchor}).encode()
            return "POST", f"/api/v1/projects/{project.pk}/tickets/{number}/move", headers, body
        return request

    requests = {"one": moves_in(projects[:1]), "spread": moves_in(projects)}
    with Servers("gunicorn", _server_env()) as servers:
        _taking_turns(servers, requests, clients=16, seconds=2)  # warm up: compile, connect, prepare
        rates = _taking_turns(servers, requests, clients=16, seconds=seconds)
    return {"figure": "concurrent relative moves, 16 clients, one project ÷ spread over 16",
            "value": f"{ratio(rates['one'], rates['spread'])} ({rates['one']:.0f}/s)",
            "goal": "measured (the cost of the project's lock)", "baseline": f"spread: {rates['spread']:.0f}/s",
            "details": f"gunicorn+uvicorn, 2 processes; a random card of a {size}-card column before a random other "
                       f"one of it; {seconds} s of each in 4 turns"}


def _project_of_one_column(owner, name: str, size: int):
    """A project named `name` of `size` tickets in its todo column, made once and kept; with its cards'
    (number, id)."""
    from projects.models import Project
    from projects.services import create_project
    from tickets.models import Ticket
    from tickets.services.positions import GAP

    project = Project.objects.filter(name=name).first()
    if project is None:
        project = create_project(owner=owner, name=name, prefix="MT")
        todo = project.statuses.get(slug="todo")
        first = Project.objects.advance_counters(project.pk, last_ticket_number=size)["last_ticket_number"] - size + 1
        Ticket.objects.bulk_create(Ticket(project=project, number=first + index, title=f"Card {index}", status=todo,
                                          created_by=owner, sort_order=index * GAP) for index in range(size))
    return project, list(Ticket.objects.filter(project=project).values_list("number", "pk"))


# ---- webhooks ---------------------------------------------------------------------------------

def webhooks() -> dict:
    """Deliveries per second from one Procfile worker process (Celery on Redis; in SMALL, the web process's sender
    on SQLite) to a fast local receiver, and commit → the receiver's first byte with 100 endpoints."""
    redis_url = "" if SMALL else REDIS_URL
    os.environ.update({"REDIS_URL": redis_url, "CELERY_BROKER_URL": redis_url,
                       "WEBHOOK_ALLOWED_PRIVATE_HOSTS": "127.0.0.1"})
    setup("webhooks")
    from bench.webhooks_bench import run

    result = run(small=SMALL, database_url=os.environ["DATABASE_URL"], redis_url=redis_url)
    one, ten = result["one"], result["ten"]
    cpu = f", {one['cpu_ms']:.2f} ms of the worker's CPU each" if one["cpu_ms"] is not None else ""
    return {"figure": "webhook deliveries to a local receiver, one worker process",
            "value": f"{one['per_second']:.0f} deliveries/s to one endpoint{cpu}; {ten['per_second']:.0f}/s to 10; "
                     f"commit → first byte with 100 endpoints p50 {result['p50']:.0f} ms, p99 {result['p99']:.0f} ms",
            "goal": "≥ 1,000 deliveries/s; p99 < 250 ms with 100 endpoints",
            "baseline": f"one endpoint alone: p50 {result['alone_p50']:.0f} ms, p99 {result['alone_p99']:.0f} ms",
            "details": f"the Procfile's worker (one process, its asyncio sender), an asyncio receiver in a process of "
                       f"its own; {one['deliveries']:,} events committed at once (a tag taken off their tickets) to "
                       f"one endpoint, then {ten['deliveries'] // 10:,} to 10 endpoints, for the rates; "
                       f"for the latencies, {result['lone']} lone ticket creations to one endpoint, then {result['lone']} "
                       "rounds of one ticket created in each of 5 projects of 20 endpoints (100 deliveries a round), "
                       "each round once the last reached every endpoint"}
