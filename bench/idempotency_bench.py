"""The cost of Idempotency-Key (issue 23): a ticket create without a key, with a new key, and the replay of a
kept answer, through the whole HTTP stack in one process (Django's test client), their runs taken in turns;
beside them the same unkeyed create with the mechanism taken out, which an unkeyed request must not be slower
than."""

import itertools
import json
import os
from types import SimpleNamespace

from bench.figures import REDIS_URL, SMALL, owner_client, paired_p50, ratio, setup
from config.collector import tune_for_serving

PROJECT_NAME = "Idempotency costs"


def idempotency() -> dict:
    os.environ.update({"REDIS_URL": "" if SMALL else REDIS_URL, "API_RATE_LIMIT_PER_MINUTE": str(10**9),
                       "API_USER_RATE_LIMIT_PER_MINUTE": str(10**9)})
    setup("idempotency")
    from accounts.models import User
    from core.models import IdempotencyKey
    from projects.models import Project
    from projects.services import create_project

    owner, _ = User.objects.get_or_create(username="bench-owner")
    Project.objects.filter(name=PROJECT_NAME).delete()
    IdempotencyKey.objects.filter(user=owner).delete()
    project = create_project(owner=owner, name=PROJECT_NAME, prefix="IDEM")
    tune_for_serving()
    client, url = owner_client(), f"/api/v1/projects/{project.pk}/tickets"
    body = json.dumps({"title": "Created by the benchmark", "tags": []})
    keys = itertools.count()

    def create(expected_status: int = 201, replayed: str | None = None, **headers) -> None:
        response = client.post(url, body, content_type="application/json", **headers)
        assert (response.status_code, response.get("Idempotent-Replayed")) == (expected_status, replayed), response

    create(HTTP_IDEMPOTENCY_KEY="kept")  # the answer every replay gets

    from core import idempotency as mechanism
    from core.api import base

    # The base view's module with a claim that never looks at the request: swapped in for one request at a time.
    taken_out = SimpleNamespace(claim=lambda request: None, keep=mechanism.keep, Replay=mechanism.Replay)

    def without_the_mechanism() -> None:
        base.idempotency = taken_out
        try:
            create()
        finally:
            base.idempotency = mechanism

    timings = paired_p50({
        "unkeyed": create,
        "keyed": lambda: create(HTTP_IDEMPOTENCY_KEY=f"new-{next(keys)}"),
        "replay": lambda: create(replayed="true", HTTP_IDEMPOTENCY_KEY="kept"),
        "bare": without_the_mechanism,
    }, 5 if SMALL else 60)
    unkeyed, keyed, replay, bare = timings.values()
    return {"figure": "ticket create with an Idempotency-Key ÷ without one; a replay ÷ a create",
            "value": f"{ratio(keyed, unkeyed)}× (new key), {ratio(replay, unkeyed)}× (replay)",
            "goal": "keyed ≤ 1.3×, replay < 1×",
            "baseline": f"unkeyed {unkeyed:.1f} ms; the mechanism taken out: {ratio(bare, unkeyed)}×",
            "details": f"p50 over {5 if SMALL else 60} turns, in-process (test client, no server): unkeyed "
                       f"{unkeyed:.1f} ms, keyed {keyed:.1f} ms (a claim INSERT and the answer's UPDATE), replay "
                       f"{replay:.1f} ms (the INSERT that finds the key, its answer's SELECT), without the "
                       f"mechanism {bare:.1f} ms; one project, PostgreSQL and Redis"}
