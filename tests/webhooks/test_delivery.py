"""An event of the project reaches its webhook: the frame of the log, signed, recorded as delivered."""

import time

import pytest
from django.db import connection
from django.test import TestCase
from django.test.utils import CaptureQueriesContext

from core import background
from events.models import ProjectEvent
from webhooks import tasks
from webhooks.models import Delivery

from .conftest import create_ticket, create_webhook, post_once, recorded
from .receivers import Receiver

SENDING = pytest.mark.usefixtures("sending")


@SENDING
def test_an_event_arrives_signed_as_the_log_keeps_it(project, registered, committed):
    hook = registered()
    endpoint, webhook, secret = hook.endpoint, hook.webhook, hook.secret

    with committed():
        create_ticket(hook.client, project.id, "Login screen")

    [received] = endpoint.wait_for(1)
    recorded()
    kept = ProjectEvent.objects.get(project=project)
    assert received.verified(secret) == kept.payload
    assert (received.path, received.frame()["event"], received.frame()["seq"]) == ("/hooks", "ticket.created", kept.seq)
    assert received.headers["content-type"] == "application/json"
    assert received.headers["host"] == endpoint.url.split("/")[2]
    assert received.message_id.startswith("msg_")
    assert abs(int(received.headers["webhook-timestamp"]) - time.time()) < 60
    delivery = Delivery.objects.get()
    assert (delivery.webhook_id, delivery.message_id, delivery.status, delivery.attempts, delivery.response_status,
            delivery.response_body, delivery.seq) == (webhook["id"], received.message_id, "delivered", 1, 200, "ok",
                                                      kept.seq)


@SENDING
def test_the_deliveries_list_shows_what_happened(project, registered, committed):
    hook = registered()
    with committed():
        create_ticket(hook.client, project.id, "First")
        create_ticket(hook.client, project.id, "Second")
    first, second = hook.endpoint.wait_for(2)
    recorded()

    response = hook.client.get(f"/api/v1/webhooks/{hook.webhook['id']}/deliveries")

    assert response.status_code == 200
    deliveries = response.json()["deliveries"]
    assert [(d["message_id"], d["event"], d["seq"], d["status"], d["attempts"], d["response_status"],
             d["response_body"], d["error"], d["next_attempt_at"]) for d in deliveries] == [
        (second.message_id, "ticket.created", 2, "delivered", 1, 200, "ok", None, None),
        (first.message_id, "ticket.created", 1, "delivered", 1, 200, "ok", None, None)]
    assert all(d["webhook_id"] == hook.webhook["id"] and d["delivered_at"] and d["duration_ms"] is not None
               for d in deliveries)


def test_the_delivery_rows_are_written_in_the_actions_transaction(client_for, project, manager, receiver,
                                                                   django_capture_on_commit_callbacks):
    endpoint = receiver()
    client = client_for(manager)
    create_webhook(client, project.id, endpoint.url)

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        create_ticket(client, project.id)

    # Written with the ticket, nothing sent before the commit; one hand-out waits for it.
    assert list(Delivery.objects.values_list("status", "attempts")) == [("pending", 0)]
    assert endpoint.received == []
    assert [(callback.func, callback.args[0]) for callback in callbacks if getattr(callback, "args", None)] == [
        (background.run_soon, tasks.deliver)]


def statements_of_a_creation(client, project_id: int, title: str) -> list[str]:
    """The SQL of one ticket's creation, the hand-out after its commit included."""
    with CaptureQueriesContext(connection) as creation, TestCase.captureOnCommitCallbacks(execute=True):
        create_ticket(client, project_id, title)
    return [query["sql"] for query in creation.captured_queries]


def mentions_webhooks(statements: list[str]) -> list[str]:
    return [statement for statement in statements if statement and "webhooks_" in statement]


@SENDING
def test_a_project_without_an_active_webhook_pays_nothing_for_webhooks(client_for, project, manager, receiver):
    client = client_for(manager)
    create_ticket(client, project.id, "The first, whose token is used for the first time")
    never_had_one = statements_of_a_creation(client, project.id, "No webhook yet")
    webhook, _ = create_webhook(client, project.id, receiver().url)
    with_one = statements_of_a_creation(client, project.id, "One webhook")
    client.post(f"/api/v1/webhooks/{webhook['id']}/update", {"active": False}, format="json")
    switched_off = statements_of_a_creation(client, project.id, "Switched off")

    # The flag comes back with the UPDATE that numbers the event: no statement of its own.
    assert (mentions_webhooks(never_had_one), mentions_webhooks(switched_off)) == ([], [])
    assert len(never_had_one) == len(switched_off)
    # With one: the webhooks the event goes to, its deliveries' INSERT; then the attempt's statements.
    selected, inserted = mentions_webhooks(with_one)[:2]
    assert (selected.startswith("SELECT") and 'FROM "webhooks_webhook"' in selected,
            inserted.startswith('INSERT INTO "webhooks_delivery"')) == (True, True)
    assert Delivery.objects.count() == 1


@SENDING
def test_each_attempt_is_counted_by_its_outcome(project, registered, committed):
    """tracker_webhook_deliveries_total{outcome} (decisions.md, "Operations")."""
    from prometheus_client import REGISTRY

    from tests.webhooks.receivers import Answer

    def counted(outcome: str) -> float:
        return REGISTRY.get_sample_value("tracker_webhook_deliveries_total", {"outcome": outcome}) or 0.0

    before = {outcome: counted(outcome) for outcome in ("delivered", "rejected")}
    hook = registered(Answer(status=500, body=b"broken"), Answer(status=200, body=b"ok"))
    with committed():
        create_ticket(hook.client, project.id)
    hook.endpoint.wait_for(1)
    recorded()
    assert counted("rejected") - before["rejected"] == 1
    assert counted("delivered") - before["delivered"] == 0


@SENDING
def test_a_path_beyond_ascii_is_sent_percent_encoded(client_for, project, manager, receiver, committed):
    endpoint = receiver()
    client = client_for(manager)
    create_webhook(client, project.id, f"{endpoint.url}/café?to=Zoë")

    with committed():
        create_ticket(client, project.id)

    [received] = endpoint.wait_for(1)
    assert received.path == "/hooks/caf%C3%A9?to=Zo%C3%AB"
    recorded()
    assert list(Delivery.objects.values_list("status", "attempts")) == [("delivered", 1)]


def test_a_request_that_cannot_be_written_is_a_failed_attempt():
    with Receiver() as endpoint:
        exchange = post_once(endpoint.url, body=b"{}", headers={"webhook-id": "msg_é"}, timeout=5)

    assert (exchange.status, exchange.failure, endpoint.received) == (None, "connection", [])
    assert exchange.error.startswith("the request could not be sent: ")
