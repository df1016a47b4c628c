"""Import and export at size (issue 33): a Trello board of 10,000 cards, 30,000 comments and 20,000 checklist
items imported as a new project, then that project exported, each timed as the job's run on the background
runner does it (transfers.runner.run, in this process), with the process's peak memory over the import.

`python -m bench transfers` (PostgreSQL, database tracker_bench_transfers; BENCH_SMALL=1: 100 cards on SQLite);
`CARDS=2000 .venv/bin/python -m bench transfers` for another size (comments 3 and checklist items 2 per card).
"""

import json
import os
import random
import tempfile
import time
from pathlib import Path

from bench.figures import SMALL, setup

CARDS = int(os.environ.get("CARDS") or (100 if SMALL else 10_000))
COMMENTS_PER_CARD, ITEMS_PER_CARD = 3, 2
LISTS = ["Backlog", "To Do", "Doing", "Review", "Done", "Waiting", "Archive"]
WORDS = ("launch rocket fuel count down orbit moon lander crew check pressure valve module docking signal "
         "telemetry guidance thrust stage booster payload").split()


def _id(kind: int, n: int) -> str:
    """A Trello-like id: 8 hex digits of a time, then the kind and a counter."""
    return f"65f0a1b2{kind:04x}{n:012x}"


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def write_board(path: Path, cards: int) -> None:
    """A board as Trello exports it, written a card at a time (never whole in memory)."""
    rng = random.Random(33)
    members = [{"id": _id(1, n), "username": f"member{n}", "fullName": f"Member {n}"} for n in range(12)]
    labels = [{"id": _id(2, n), "name": name, "color": color}
              for n, (name, color) in enumerate([("Frontend", "green"), ("Backend", "blue"), ("", "red"),
                                                 ("Content", "purple")])]
    lists = [{"id": _id(3, n), "name": name, "closed": name == "Archive", "pos": 16384 * (n + 1)}
             for n, name in enumerate(LISTS)]
    with path.open("w") as out:
        out.write('{"id": "65f0a1b2c3d4e5f601234567", "name": "Bench board", ')
        out.write(f'"lists": {json.dumps(lists)}, "labels": {json.dumps(labels)}, "members": {json.dumps(members)}, ')
        out.write('"cards": [')
        for n in range(cards):
            card = {"id": _id(4, n), "idShort": n + 1, "name": _text(rng, 6), "desc": _text(rng, 40),
                    "idList": rng.choice(lists)["id"], "pos": rng.randint(1, 10**6), "closed": rng.random() < 0.05,
                    "due": "2024-04-01T10:00:00.000Z" if n % 7 == 0 else None,
                    "dateLastActivity": "2024-03-13T16:40:12.345Z",
                    "idLabels": [label["id"] for label in rng.sample(labels, rng.randint(0, 2))],
                    "idMembers": [member["id"] for member in rng.sample(members, rng.randint(0, 2))],
                    "attachments": [], "badges": {"comments": COMMENTS_PER_CARD}, "customFieldItems": []}
            out.write(("," if n else "") + json.dumps(card))
        out.write('], "checklists": [')
        for n in range(cards):
            items = [{"id": _id(5, n * ITEMS_PER_CARD + i), "name": _text(rng, 4), "pos": 16384 * (i + 1),
                      "state": rng.choice(["complete", "incomplete"])} for i in range(ITEMS_PER_CARD)]
            checklist = {"id": _id(6, n), "name": "Checklist", "idCard": _id(4, n), "pos": 16384, "checkItems": items}
            out.write(("," if n else "") + json.dumps(checklist))
        out.write('], "actions": [')
        for n in range(cards * COMMENTS_PER_CARD):
            member = rng.choice(members)
            action = {"id": _id(7, n), "type": "commentCard", "date": "2024-03-12T15:04:05.123Z",
                      "data": {"text": _text(rng, 25), "card": {"id": _id(4, n % cards)}},
                      "memberCreator": {"id": member["id"], "username": member["username"],
                                        "fullName": member["fullName"]}}
            out.write(("," if n else "") + json.dumps(action))
        out.write("]}")


def _reset_peak_memory() -> None:
    Path("/proc/self/clear_refs").write_text("5")  # VmHWM starts again from what the process holds now


def _memory_kib(field: str) -> int:
    line = next(line for line in Path("/proc/self/status").read_text().splitlines() if line.startswith(field))
    return int(line.split()[1])


def transfers() -> dict:
    setup("transfers")
    from django.core.files import File
    from django.core.files.storage import default_storage

    from accounts.models import User
    from transfers import runner
    from transfers.models import Job, JobKind

    importer, _ = User.objects.get_or_create(username="bench-importer")
    with tempfile.TemporaryDirectory() as directory:
        board = Path(directory) / "board.json"
        write_board(board, CARDS)
        size = board.stat().st_size
        with board.open("rb") as content:
            upload = default_storage.save("imports/bench-board.json", File(content))
    job = Job.objects.create(kind=JobKind.IMPORT, source="trello", created_by=importer, upload=upload,
                             new_project_name=f"Bench {time.time():.0f}", new_project_prefix="BEN")
    _reset_peak_memory()
    before = _memory_kib("VmRSS")
    started = time.perf_counter()
    runner.run(job.pk)
    import_seconds = time.perf_counter() - started
    peak = _memory_kib("VmHWM")
    job.refresh_from_db()
    assert job.status == "succeeded", job.error
    export = Job.objects.create(kind=JobKind.EXPORT, project=job.project, created_by=importer)
    started = time.perf_counter()
    runner.run(export.pk)
    export_seconds = time.perf_counter() - started
    export.refresh_from_db()
    assert export.status == "succeeded", export.error
    zip_size = default_storage.size(export.result)
    default_storage.delete(export.result)
    created = job.report["created"]
    return {"figure": f"import of a Trello board of {CARDS:,} cards, {created['comments']:,} comments and "
                      f"{created['checklist_items']:,} checklist items; its export",
            "value": f"import {import_seconds:.1f} s, peak {peak / 1024:.0f} MiB; export {export_seconds:.1f} s",
            "goal": "import < 60 s and < 300 MB; export < 30 s",
            "baseline": f"the process held {before / 1024:.0f} MiB before the import",
            "details": f"{size / 1024 / 1024:.1f} MiB of JSON read in 7 passes with ijson (yajl2_c); one "
                       f"transaction, bulk writes of 500 rows; peak resident memory (VmHWM, reset before) of the "
                       f"process running the job; the export's zip {zip_size / 1024 / 1024:.1f} MiB; "
                       f"{os.environ.get('DATABASE_URL', '').split('://')[0]}"}
