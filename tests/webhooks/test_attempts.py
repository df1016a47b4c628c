"""What happens to a delivery: event filter, retries on the schedule, failure, redirects, long and slow
answers, ping, redelivery, rotation, switching off and on, deletion, and endpoints failing for days."""

import socket
from datetime import timedelta

import pytest
from django.utils import timezone

from core.time import timestamp
from events.models import ProjectEvent
from tests.factories import CommentFactory, ProjectFactory, TicketFactory
from tests.polling import eventually
from webhooks import attempts, health
from webhooks.attempts import UNREADABLE_SECRET
from webhooks.models import Delivery, Webhook

from .conftest import create_ticket, create_webhook, deliveries, recorded, sweep
from .receivers import Answer

pytestmark = pytest.mark.usefixtures("sending")


def test_a_webhook_receives_only_the_events_it_asked_for(client_for, project, manager, receiver, committed):
    everything, comments = receiver(), receiver()
    client = client_for(manager)
    create_webhook(client, project.id, everything.url)
    create_webhook(client, project.id, comments.url, events=["comment.created"])
    ticket = TicketFactory(project=project)

    with committed():
        create_ticket(client, project.id)
        client.post(f"/api/v1/projects/{project.id}/tickets/{ticket.number}/comments", {"comment": "Looks good"},
                    format="json")

    kept = list(ProjectEvent.objects.filter(project=project).order_by("seq").values_list("event", flat=True))
    assert "comment.created" in kept and len(kept) > 2
    assert [r.frame()["event"] for r in everything.wait_for(len(kept))] == kept
    [comment] = comments.wait_for(1)
    assert (comment.frame()["event"], comment.frame()["comment"]["message"]) == ("comment.created", "Looks good")
    assert len(comments.received) == 1


def test_a_failed_attempt_is_retried_on_the_schedule_then_delivered(client_for, project, manager, receiver,
                                                                      committed):
    endpoint = receiver(Answer(status=503, body=b"busy"), Answer(status=204, body=b""))
    client = client_for(manager)
    create_webhook(client, project.id, endpoint.url)

    with committed():
        create_ticket(client, project.id)
    [first] = endpoint.wait_for(1)
    recorded()
    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.response_status, delivery.response_body, delivery.error) == (
        "retrying", 1, 503, "busy", "answered 503")
    assert delivery.next_attempt_at is not None

    sweep()  # the schedule's first delay is 0 here: the retry is due

    second = endpoint.wait_for(2)[1]
    assert second.message_id == first.message_id and second.body == first.body
    # When the event happened, as the log keeps it: not the attempt's time (that is webhook-timestamp).
    assert first.frame()["occurred_at"] == timestamp(ProjectEvent.objects.get().created_at)
    assert deliveries() == [("ticket.created", "delivered", 2, 204, "")]
    delivery.refresh_from_db()
    assert (delivery.next_attempt_at, delivery.delivered_at is not None) == (None, True)


def test_a_delivery_fails_once_the_schedule_is_spent(client_for, project, manager, receiver, committed, settings):
    settings.WEBHOOK_RETRY_SCHEDULE = [0, 3600]
    endpoint = receiver(Answer(status=500, body=b"broken"))
    client = client_for(manager)
    create_webhook(client, project.id, endpoint.url)
    with committed():
        create_ticket(client, project.id)
    endpoint.wait_for(1)

    sweep()
    endpoint.wait_for(2)
    recorded()
    retry_at = Delivery.objects.get().next_attempt_at
    sweep()  # the next retry waits an hour: nothing is due
    assert len(endpoint.received) == 2
    assert timedelta(minutes=59) < retry_at - timezone.now() <= timedelta(hours=1)

    Delivery.objects.update(next_attempt_at=timezone.now())  # an hour later
    sweep()

    assert len(endpoint.wait_for(3)) == 3
    assert deliveries() == [("ticket.created", "failed", 3, 500, "answered 500")]
    recorded()
    assert Delivery.objects.get().next_attempt_at is None
    sweep()
    assert len(endpoint.received) == 3


def test_a_redirect_is_a_failed_attempt_and_is_not_followed(client_for, project, manager, receiver, committed):
    target = receiver()
    endpoint = receiver(Answer(status=307, body=b"", headers=(("Location", target.url),)))
    client = client_for(manager)
    create_webhook(client, project.id, endpoint.url)

    with committed():
        create_ticket(client, project.id)

    endpoint.wait_for(1)
    assert deliveries() == [("ticket.created", "retrying", 1, 307, "answered 307 (redirects are not followed)")]
    assert target.received == []


def test_of_a_long_answer_only_the_first_1024_characters_are_read_and_kept(client_for, project, manager, receiver,
                                                                           committed):
    endpoint = receiver(Answer(status=200, body="é".encode() + b"x" * 1_000_000))
    client = client_for(manager)
    create_webhook(client, project.id, endpoint.url)

    with committed():
        create_ticket(client, project.id)

    endpoint.wait_for(1)
    recorded()
    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.response_status, delivery.response_body) == ("delivered", 200, "é" + "x" * 1023)


def test_the_deadline_holds_for_the_whole_exchange(client_for, project, manager, receiver, committed, settings):
    # Each byte comes well within the deadline; the answer as a whole does not.
    settings.WEBHOOK_TIMEOUT_SECONDS = 1
    endpoint = receiver(Answer(status=200, body=b"x" * 100, drip_seconds=0.2))
    client = client_for(manager)
    create_webhook(client, project.id, endpoint.url)
    settings.WEBHOOK_TIMEOUT_SECONDS = 1

    with committed():
        create_ticket(client, project.id)

    recorded()

    delivery = Delivery.objects.get()
    # The status line came at once: the message is delivered, with the part of the body that came in time.
    assert (delivery.status, delivery.response_status) == ("delivered", 200)
    assert 2 <= len(delivery.response_body) <= 6 and 1000 <= delivery.duration_ms < 3000


def test_a_receiver_that_never_answers_fails_at_the_deadline(client_for, project, manager, receiver, committed,
                                                             settings):
    settings.WEBHOOK_TIMEOUT_SECONDS = 1
    endpoint = receiver(Answer(hang=True))
    client = client_for(manager)
    create_webhook(client, project.id, endpoint.url)

    with committed():
        create_ticket(client, project.id)

    endpoint.wait_for(1)
    assert deliveries() == [("ticket.created", "retrying", 1, None, "no complete answer within 1 s")]
    assert 1000 <= Delivery.objects.get().duration_ms < 3000


def test_an_endpoint_that_refuses_connections_is_retried(client_for, project, manager, committed):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]  # nobody listens there once closed
    client = client_for(manager)
    create_webhook(client, project.id, f"http://127.0.0.1:{port}/hooks")

    with committed():
        create_ticket(client, project.id)

    [(event, status, attempts, response_status, error)] = deliveries()
    assert (event, status, attempts, response_status) == ("ticket.created", "retrying", 1, None)
    assert error.startswith("connection failed")


def test_ping_sends_a_ping_message(client_for, project, manager, receiver, committed):
    endpoint = receiver()
    client = client_for(manager)
    webhook, secret = create_webhook(client, project.id, endpoint.url, events=["tag.created"])

    with committed():
        response = client.post(f"/api/v1/webhooks/{webhook['id']}/ping")

    assert response.status_code == 202
    delivery = response.json()["delivery"]
    assert {key: delivery[key] for key in ("webhook_id", "event", "seq", "status", "attempts")} == {
        "webhook_id": webhook["id"], "event": "webhook.ping", "seq": None, "status": "pending", "attempts": 0}
    [ping] = endpoint.wait_for(1)
    assert ping.verified(secret) == {"event": "webhook.ping", "project_id": project.id, "webhook_id": webhook["id"],
                                     "occurred_at": timestamp(Delivery.objects.get().created_at)}
    assert ping.message_id == delivery["message_id"]
    assert deliveries() == [("webhook.ping", "delivered", 1, 200, "")]


def test_redeliver_sends_the_same_message_again(client_for, project, manager, receiver, committed):
    endpoint = receiver()
    client = client_for(manager)
    webhook, secret = create_webhook(client, project.id, endpoint.url)
    with committed():
        create_ticket(client, project.id)
    [first] = endpoint.wait_for(1)
    recorded()
    original = Delivery.objects.get()

    with committed():
        response = client.post(f"/api/v1/webhooks/{webhook['id']}/deliveries/{original.id}/redeliver")

    assert response.status_code == 202
    again = response.json()["delivery"]
    assert (again["message_id"], again["event"], again["seq"], again["status"]) == (
        first.message_id, "ticket.created", original.seq, "pending")
    second = endpoint.wait_for(2)[1]
    assert (second.message_id, second.verified(secret)) == (first.message_id, first.verified(secret))
    assert deliveries() == [("ticket.created", "delivered", 1, 200, "")] * 2


def test_a_delivered_redelivery_settles_its_original(project, failed_once, committed):
    original = Delivery.objects.get()
    failed_once.endpoint.answers = [Answer(status=200)]

    with committed():
        response = failed_once.client.post(
            f"/api/v1/webhooks/{failed_once.webhook['id']}/deliveries/{original.id}/redeliver")

    assert response.status_code == 202
    failed_once.endpoint.wait_for(2)
    # The original waited for its retry: the message arrived, so it is delivered and never sent again.
    assert deliveries() == [("ticket.created", "delivered", 1, 500, ""), ("ticket.created", "delivered", 1, 200, "")]
    assert attempts.sweep(queue_is_empty=True) == []
    assert len(failed_once.endpoint.received) == 2


def test_after_a_rotation_both_secrets_sign_for_a_day(client_for, project, manager, receiver, committed):
    endpoint = receiver()
    client = client_for(manager)
    webhook, old = create_webhook(client, project.id, endpoint.url)
    new = client.post(f"/api/v1/webhooks/{webhook['id']}/rotate-secret").json()["secret"]

    with committed():
        create_ticket(client, project.id, "During the overlap")
    [during] = endpoint.wait_for(1)
    Webhook.objects.update(previous_secret_expires_at=timezone.now())  # a day later
    with committed():
        create_ticket(client, project.id, "After it")
    after = endpoint.wait_for(2)[1]

    assert len(during.headers["webhook-signature"].split(" ")) == 2
    assert during.verified(old)["ticket"]["title"] == during.verified(new)["ticket"]["title"] == "During the overlap"
    assert len(after.headers["webhook-signature"].split(" ")) == 1
    assert after.verified(new)["ticket"]["title"] == "After it"
    with pytest.raises(Exception, match="No matching signature found"):
        after.verified(old)


def test_a_switched_off_webhook_receives_nothing_until_switched_on(client_for, project, manager, receiver,
                                                                   committed):
    endpoint = receiver()
    client = client_for(manager)
    webhook, _ = create_webhook(client, project.id, endpoint.url)
    client.post(f"/api/v1/webhooks/{webhook['id']}/update", {"active": False}, format="json")

    with committed():
        create_ticket(client, project.id, "While off")
    refused = client.post(f"/api/v1/webhooks/{webhook['id']}/ping")
    assert (refused.status_code, refused.json()) == (
        422, {"code": "validation_failed", "error": "the webhook is not active: switch it on first", "field": "active"})
    assert (endpoint.received, Delivery.objects.count()) == ([], 0)

    client.post(f"/api/v1/webhooks/{webhook['id']}/update", {"active": True}, format="json")
    with committed():
        create_ticket(client, project.id, "Back on")

    [received] = endpoint.wait_for(1)
    assert received.frame()["ticket"]["title"] == "Back on"


@pytest.fixture
def failed_once(project, registered, committed):
    """A webhook whose endpoint answers 500: its first event's delivery waits for a retry."""
    hook = registered(Answer(status=500))
    with committed():
        create_ticket(hook.client, project.id)
    hook.endpoint.wait_for(1)
    recorded()
    return hook


def test_switching_off_fails_the_deliveries_still_waiting(failed_once):
    failed_once.client.post(f"/api/v1/webhooks/{failed_once.webhook['id']}/update", {"active": False}, format="json")
    sweep()

    assert deliveries() == [("ticket.created", "failed", 1, 500, "the webhook was switched off before this attempt")]
    assert len(failed_once.endpoint.received) == 1


def test_a_deleted_webhook_receives_nothing_more(project, failed_once, committed):
    failed_once.client.post(f"/api/v1/webhooks/{failed_once.webhook['id']}/delete")
    with committed():
        create_ticket(failed_once.client, project.id)
    sweep()

    assert (len(failed_once.endpoint.received), Delivery.objects.count()) == (1, 0)
    project.refresh_from_db()
    assert project.has_active_webhooks is False


def test_a_project_s_events_go_to_its_own_webhooks_only(client_for, project, manager, receiver, committed):
    mine, theirs = receiver(), receiver()
    other = ProjectFactory()
    create_webhook(client_for(manager), project.id, mine.url)
    create_webhook(client_for(other.owner), other.id, theirs.url)

    with committed():
        create_ticket(client_for(other.owner), other.id, "Theirs")
        create_ticket(client_for(manager), project.id, "Mine")

    [received] = mine.wait_for(1)
    assert (received.frame()["project_id"], received.frame()["ticket"]["title"]) == (project.id, "Mine")
    assert [r.frame()["ticket"]["title"] for r in theirs.wait_for(1)] == ["Theirs"]
    assert (len(mine.received), len(theirs.received)) == (1, 1)


def test_an_endpoint_failing_for_five_days_is_switched_off(client_for, project, manager, receiver, committed):
    endpoint = receiver(Answer(status=500), Answer(status=500), Answer(status=200))
    client = client_for(manager)
    webhook, _ = create_webhook(client, project.id, endpoint.url)
    with committed():
        create_ticket(client, project.id)
    endpoint.wait_for(1)
    recorded()
    failing_since = Webhook.objects.get().failing_since
    sweep()
    endpoint.wait_for(2)
    recorded()

    assert Webhook.objects.get().failing_since == failing_since  # the first failure counts
    sweep()
    endpoint.wait_for(3)
    recorded()
    assert Webhook.objects.get().failing_since is None  # delivered: the endpoint is healthy again

    endpoint.answers = [Answer(status=500)]
    with committed():
        create_ticket(client, project.id)
    endpoint.wait_for(4)
    recorded()
    Webhook.objects.update(failing_since=timezone.now() - timedelta(days=4, hours=23))
    sweep()
    assert Webhook.objects.get().active is True
    endpoint.wait_for(5)  # the retry that sweep handed out fails too
    recorded()

    Webhook.objects.update(failing_since=timezone.now() - timedelta(days=5, minutes=1))
    sweep()

    stored = Webhook.objects.get()
    shown = client.get(f"/api/v1/webhooks/{webhook['id']}").json()["webhook"]
    assert (stored.active, shown["active"]) == (False, False)
    assert shown["disabled_reason"].startswith("every delivery failed from ") and "for 5 days" in shown["disabled_reason"]
    assert Delivery.objects.filter(status__in=["pending", "retrying"]).count() == 0
    project.refresh_from_db()
    assert project.has_active_webhooks is False

    switched_on = client.post(f"/api/v1/webhooks/{webhook['id']}/update", {"active": True}, format="json")
    assert (switched_on.json()["webhook"]["active"], switched_on.json()["webhook"]["disabled_reason"]) == (True, None)


def test_the_address_is_checked_again_at_each_attempt(client_for, project, manager, receiver, committed, settings):
    endpoint = receiver()
    client = client_for(manager)
    create_webhook(client, project.id, endpoint.url)
    settings.WEBHOOK_ALLOWED_PRIVATE_HOSTS = []  # 127.0.0.1 was allowed when it was registered, no longer

    with committed():
        create_ticket(client, project.id)

    assert endpoint.received == []
    assert deliveries() == [("ticket.created", "retrying", 1, None, "url's host 127.0.0.1 is not a public address")]


def test_a_name_that_resolves_to_a_private_address_is_a_failed_attempt(client_for, project, manager, committed,
                                                                       monkeypatch):
    client = client_for(manager)
    create_webhook(client, project.id, "https://hooks.example.test/in")  # a name is not looked up at registration
    monkeypatch.setattr(socket, "getaddrinfo", lambda host, port, *args, **kwargs: [
        (socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port)) for address in ["93.184.215.14", "10.0.0.7"]])

    with committed():
        create_ticket(client, project.id)

    assert deliveries() == [("ticket.created", "retrying", 1, None,
                             "url's host hooks.example.test stands for 10.0.0.7, which is not a public address")]


def test_the_connection_goes_to_the_address_that_was_checked(client_for, project, manager, receiver, committed,
                                                             monkeypatch):
    endpoint = receiver()
    port = int(endpoint.url.split(":")[2].split("/")[0])
    lookups, resolve = [], socket.getaddrinfo

    def rebinding(host, port, *args, **kwargs):  # a name whose next answer would be another address
        if host != "hooks.example.test":
            return resolve(host, port, *args, **kwargs)
        lookups.append(host)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1" if len(lookups) == 1 else "10.9.9.9", port))]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    client = client_for(manager)
    create_webhook(client, project.id, f"http://hooks.example.test:{port}/hooks")

    with committed():
        create_ticket(client, project.id)  # one lookup: the attempt's, whose answer it connects to

    [received] = endpoint.wait_for(1)
    assert received.headers["host"] == f"hooks.example.test:{port}"
    assert (lookups, deliveries()) == (["hooks.example.test"], [("ticket.created", "delivered", 1, 200, "")])


def test_a_comment_event_carries_its_frame(client_for, project, manager, receiver, committed):
    endpoint = receiver()
    client = client_for(manager)
    _, secret = create_webhook(client, project.id, endpoint.url, events=["comment.updated"])
    comment = CommentFactory(ticket=TicketFactory(project=project), author=manager)

    with committed():
        client.post(f"/api/v1/reactions/{comment.id}/update", {"message": "Edited"}, format="json")

    [received] = endpoint.wait_for(1)
    frame = received.verified(secret)
    assert (frame["event"], frame["ticket_id"], frame["comment"]["message"], frame["actor"]["id"]) == (
        "comment.updated", comment.ticket_id, "Edited", manager.id)


def test_a_secret_sealed_under_another_secret_key_is_a_failed_attempt(project, registered, committed, settings):
    hook = registered()
    settings.SECRET_KEY = "another key, as on a server a dump was restored to"
    settings.SECRET_KEY_FALLBACKS = []

    with committed():
        create_ticket(hook.client, project.id)

    assert hook.endpoint.received == []
    assert deliveries() == [("ticket.created", "retrying", 1, None, UNREADABLE_SECRET)]
    rotated = hook.client.post(f"/api/v1/webhooks/{hook.webhook['id']}/rotate-secret").json()["secret"]
    sweep()
    [received] = hook.endpoint.wait_for(1)
    assert received.verified(rotated)["event"] == "ticket.created"


def test_a_secret_sealed_under_a_previous_secret_key_still_signs(project, registered, committed, settings):
    hook = registered()
    settings.SECRET_KEY_FALLBACKS = [settings.SECRET_KEY]
    settings.SECRET_KEY = "the new key"

    with committed():
        create_ticket(hook.client, project.id)

    assert hook.endpoint.wait_for(1)[0].verified(hook.secret)["event"] == "ticket.created"


def test_a_delivery_waiting_behind_a_busy_endpoint_is_not_taken_for_lost(project, registered, committed, settings):
    """Its sender holds it until the endpoint has room, renewing its hand-out: the sweep must not hand it out
    again as lost and start a second chain behind the endpoint."""
    settings.WEBHOOK_ENDPOINT_CONCURRENCY = 1
    settings.WEBHOOK_LOST_AFTER_SECONDS = 6  # renewed every 2 s; the hung attempt's claim is younger than that
    settings.WEBHOOK_RETRY_SCHEDULE = [3600]
    hook = registered(Answer(status=500), Answer(hang=True))
    with committed():
        create_ticket(hook.client, project.id, "Fails")
    recorded()  # the endpoint is failing: every attempt in flight counts against its one
    with committed():
        create_ticket(hook.client, project.id, "Hangs")
    hook.endpoint.wait_until(lambda received: len(received) == 2, timeout=5)
    with committed():
        create_ticket(hook.client, project.id, "Waits")
    waiting = Delivery.objects.get(seq=3)
    long_ago = timezone.now() - timedelta(minutes=5)
    Delivery.objects.filter(pk=waiting.pk).update(dispatched_at=long_ago)

    assert eventually(lambda: Delivery.objects.get(pk=waiting.pk).dispatched_at > long_ago, seconds=4)
    assert attempts.sweep(queue_is_empty=True) == []
    assert (len(hook.endpoint.received), Delivery.objects.get(pk=waiting.pk).attempts) == (2, 0)


def test_a_delivery_clears_the_failing_mark_another_attempt_set_meanwhile(registered):
    webhook = Webhook.objects.get(pk=registered().webhook["id"])  # as the attempt read it: healthy
    Webhook.objects.filter(pk=webhook.pk).update(failing_since=timezone.now())  # another attempt failed since

    health.note_endpoints_health(delivered=[webhook], failed=[], now=timezone.now())

    assert Webhook.objects.get(pk=webhook.pk).failing_since is None
