"""One scenario for both ways deliveries are sent (the Procfile's worker on Redis; the web process without a
broker): with 100 endpoints that hang, a healthy endpoint's 10 messages all arrive within a second of their events,
whether it shares its project with hung endpoints or belongs to another project."""

import time

from tests.realtime.servers import ApiClient

from .receivers import HangingEndpoints, Receiver

HUNG = 100
MESSAGES = 10
PER_PROJECT = 20  # webhooks.services.MAX_WEBHOOKS_PER_PROJECT
WITHIN_SECONDS = 1.0


def new_project(api: ApiClient, name: str) -> int:
    status, body = api.request("POST", "/api/v1/projects", {"name": name, "prefix": name[:3].upper()})
    assert status == 201, body
    return body["project"]["id"]


def register(api: ApiClient, project_id: int, url: str) -> None:
    status, body = api.request("POST", f"/api/v1/projects/{project_id}/webhooks", {"url": url})
    assert status == 201, body


def create_ticket(api: ApiClient, project_id: int, title: str) -> None:
    status, body = api.request("POST", f"/api/v1/projects/{project_id}/tickets", {"title": title})
    assert status == 201, body


def hung_endpoints_delay_no_healthy_one(server_url: str, token: str, *, concurrency: int) -> None:
    """`concurrency`: WEBHOOK_ENDPOINT_CONCURRENCY of the sender under test."""
    api = ApiClient(server_url, token)
    with HangingEndpoints(HUNG) as hung, Receiver() as beside, Receiver() as elsewhere:
        # The crowded project: a healthy endpoint beside 19 hung ones; the other hung ones fill projects of 20.
        crowded, quiet = new_project(api, "Crowded"), new_project(api, "Quiet")
        register(api, crowded, beside.url)
        register(api, quiet, elsewhere.url)
        projects, urls = [crowded], list(hung.urls)
        for url in urls[:PER_PROJECT - 1]:
            register(api, crowded, url)
        for start in range(PER_PROJECT - 1, HUNG, PER_PROJECT):
            projects.append(new_project(api, f"Noisy {start}"))
            for url in urls[start:start + PER_PROJECT]:
                register(api, projects[-1], url)
        # Every hung endpoint holds all the attempts it may, and has more messages waiting behind them.
        for project_id in projects:
            for n in range(concurrency + 1):
                create_ticket(api, project_id, f"Backlog {n}")
        deadline = time.monotonic() + 30
        while hung.connections < HUNG * concurrency:
            assert time.monotonic() < deadline, f"{hung.connections} attempts of {HUNG * concurrency} hang"
            time.sleep(0.05)
        beside.wait_for(concurrency + 1)  # the crowded project's backlog reached its healthy endpoint

        events = {}
        for n in range(MESSAGES):
            for project_id, name in ((crowded, "beside"), (quiet, "elsewhere")):
                events[f"{name} {n}"] = time.monotonic()  # the request's start: the event commits after it
                create_ticket(api, project_id, f"{name} {n}")

        arrived = [received for receiver in (beside, elsewhere)
                   for received in receiver.wait_for(MESSAGES + (concurrency + 1 if receiver is beside else 0))]
        delays = {received.frame()["ticket"]["title"]: received.at - events[received.frame()["ticket"]["title"]]
                  for received in arrived if received.frame()["ticket"]["title"] in events}
        assert len(delays) == 2 * MESSAGES
        assert max(delays.values()) < WITHIN_SECONDS, sorted(delays.items(), key=lambda item: -item[1])[:5]
    api.close()
