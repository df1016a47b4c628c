"""`make run` alone delivers: without a broker the web process's own sender sends deliveries, after the commit
and off the request path, so a receiver that never answers holds up no request and no other endpoint. A real
server (daphne, as `make run` starts it) on a SQLite file, as `make run` uses."""

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.polling import eventually
from tests.realtime.servers import ROOT, ApiClient, DaphneServer

from .hung import hung_endpoints_delay_no_healthy_one
from .receivers import Answer, Receiver


def make_run(database: Path, **env: str) -> DaphneServer:
    """A server as `make run` starts one, on a SQLite file it migrates first (not yet started)."""
    server = DaphneServer({
        "DATABASE_URL": f"sqlite:///{database}", "REDIS_URL": "", "CELERY_BROKER_URL": "",
        "WEBHOOK_ALLOWED_PRIVATE_HOSTS": "127.0.0.1", "WEBHOOK_TIMEOUT_SECONDS": "3",
        "WEBHOOK_ENDPOINT_CONCURRENCY": "2", "WEBHOOK_RETRY_SCHEDULE": "0,0", "WEBHOOK_SWEEP_SECONDS": "0.2", **env})
    subprocess.run([sys.executable, "manage.py", "migrate", "--no-input"], cwd=ROOT, env=server.env, check=True,
                   capture_output=True)
    return server


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with make_run(tmp_path_factory.mktemp("make-run") / "db.sqlite3") as server:
        server.manage("createuser", "ada")
        yield server


@pytest.fixture
def api(server):
    client = ApiClient(server.url, server.manage("issuetoken", "ada"))
    yield client
    client.close()


def new_project(api: ApiClient) -> int:
    status, body = api.request("POST", "/api/v1/projects", {"name": "Hooks", "prefix": "HK"})
    assert status == 201
    return body["project"]["id"]


def register(api: ApiClient, project_id: int, url: str) -> int:
    status, body = api.request("POST", f"/api/v1/projects/{project_id}/webhooks", {"url": url})
    assert status == 201, body
    return body["webhook"]["id"]


def deliveries(api: ApiClient, webhook_id: int) -> list[dict]:
    return api.request("GET", f"/api/v1/webhooks/{webhook_id}/deliveries")[1]["deliveries"]


def test_a_hung_receiver_delays_no_request_and_no_other_endpoint(api):
    with Receiver(Answer(hang=True)) as hung, Receiver() as healthy:
        project_id = new_project(api)
        hung_id, healthy_id = register(api, project_id, hung.url), register(api, project_id, healthy.url)
        api.request("POST", f"/api/v1/webhooks/{hung_id}/ping")
        assert eventually(lambda: any(d["error"] for d in deliveries(api, hung_id)))  # known to be failing

        durations = []
        for n in range(6):
            started = time.monotonic()
            status, _ = api.request("POST", f"/api/v1/projects/{project_id}/tickets", {"title": f"Ticket {n}"})
            durations.append(time.monotonic() - started)
            assert status == 201

        # Every request answered at once; every message reached the healthy endpoint at once, while the other
        # endpoint holds at most WEBHOOK_ENDPOINT_CONCURRENCY (2) attempts at a time.
        assert max(durations) < 1.5, durations
        titles = {received.frame()["ticket"]["title"] for received in healthy.wait_for(6, timeout=2.5)}
        assert titles == {f"Ticket {n}" for n in range(6)}  # in any order: several threads send them
        hung.wait_for(5, timeout=15)
        assert hung.most_hanging == 2
        # Its attempts end at the deadline (3 s; not at the receiver's close), as failures to retry. The bound above
        # leaves room for a loaded machine: the sender's loop shares the web process's interpreter with its requests.
        timed_out = [(d["error"], d["duration_ms"]) for d in deliveries(api, hung_id) if d["error"]]
        assert timed_out and all(error == "no complete answer within 3 s" and 3000 <= duration_ms < 6000
                                 for error, duration_ms in timed_out), timed_out
        assert [d["status"] for d in deliveries(api, healthy_id)] == ["delivered"] * 6


def test_a_hundred_hung_endpoints_delay_no_healthy_one(server):
    hung_endpoints_delay_no_healthy_one(server.url, server.manage("issuetoken", "ada"), concurrency=2)


def test_a_retry_is_sent_by_the_web_process_s_sweep(api):
    with Receiver(Answer(status=502), Answer(status=200)) as endpoint:
        webhook_id = register(api, new_project(api), endpoint.url)

        status, body = api.request("POST", f"/api/v1/webhooks/{webhook_id}/ping")

        assert status == 202
        first, second = endpoint.wait_for(2, timeout=5)
        assert first.message_id == second.message_id == body["delivery"]["message_id"]
        assert eventually(lambda: [(d["status"], d["attempts"]) for d in deliveries(api, webhook_id)]
                          == [("delivered", 2)], seconds=5)


def test_a_retry_due_from_before_a_restart_goes_out_after_it_without_a_new_event(tmp_path):
    database = tmp_path / "db.sqlite3"
    retry_in_5_seconds = {"WEBHOOK_RETRY_SCHEDULE": "5"}  # the first server stops before it is due
    with Receiver(Answer(status=503), Answer(status=200)) as endpoint:
        with make_run(database, **retry_in_5_seconds) as before:
            before.manage("createuser", "ada")
            token = before.manage("issuetoken", "ada")
            api = ApiClient(before.url, token)
            webhook_id = register(api, new_project(api), endpoint.url)
            api.request("POST", f"/api/v1/webhooks/{webhook_id}/ping")
            endpoint.wait_for(1)
            assert eventually(lambda: [(d["status"], d["attempts"]) for d in deliveries(api, webhook_id)]
                              == [("retrying", 1)])
            api.close()
        assert len(endpoint.received) == 1

        # The restarted server is only started: no request, no event, nothing handed out.
        with make_run(database, **retry_in_5_seconds) as after:
            first, second = endpoint.wait_for(2, timeout=20)
            api = ApiClient(after.url, token)
            assert second.message_id == first.message_id
            assert eventually(lambda: [(d["status"], d["attempts"]) for d in deliveries(api, webhook_id)]
                              == [("delivered", 2)], seconds=5)
            api.close()
