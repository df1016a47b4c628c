"""The webhook routes: shapes, who may call them, and every refusal."""

import pytest

from tests.factories import MembershipFactory, ProjectFactory
from webhooks import keys
from webhooks.models import Delivery, Webhook
from webhooks.serializers import LOG_EVENTS

from .conftest import ROLES_BELOW_MANAGER, create_webhook, webhooks_url

HOOK = "http://127.0.0.1:9/hooks"  # registered only: nothing is sent in these tests


def webhook_shape(webhook: Webhook, **overrides) -> dict:
    return {"id": webhook.id, "project_id": webhook.project_id, "url": webhook.url, "events": webhook.events,
            "description": webhook.description, "active": webhook.active,
            "created_at": webhook.created_at.strftime("%Y-%m-%d %H:%M:%S"), "disabled_reason": None, **overrides}


def test_create_answers_the_webhook_and_its_secret_once(client_for, project, manager):
    response = client_for(manager).post(webhooks_url(project.id), {"url": HOOK, "events": ["ticket.created",
                                        "comment.created"], "description": "CI"}, format="json")

    assert response.status_code == 201
    webhook = Webhook.objects.get()
    secret = response.json()["secret"]
    assert response.json() == {"webhook": webhook_shape(webhook), "secret": secret}
    assert (webhook.url, webhook.events, webhook.description, webhook.active, webhook.created_by) == (
        HOOK, ["ticket.created", "comment.created"], "CI", True, manager)
    assert secret.startswith("whsec_") and len(keys.signing_key(secret)) == 32
    # Stored sealed: the row alone does not hold the secret.
    assert secret not in webhook.secret and keys.unseal(webhook.secret) == secret
    project.refresh_from_db()
    assert project.has_active_webhooks is True


def test_create_takes_every_event_by_default(client_for, project, manager):
    webhook, _ = create_webhook(client_for(manager), project.id, HOOK)
    assert (webhook["events"], webhook["description"], webhook["active"]) == (["*"], "", True)


def test_list_get_update_and_delete(client_for, project, manager):
    client = client_for(manager)
    first, _ = create_webhook(client, project.id, HOOK, description="one")
    second, _ = create_webhook(client, project.id, "https://127.0.0.1:8443/b", events=["tag.created"])

    listed = client.get(webhooks_url(project.id))
    got = client.get(f"/api/v1/webhooks/{second['id']}")
    updated = client.post(f"/api/v1/webhooks/{second['id']}/update",
                          {"url": "http://127.0.0.1:9/other", "events": ["*"], "description": "two", "active": False},
                          format="json")

    assert (listed.status_code, listed.json()) == (200, {"webhooks": [first, second]})
    assert (got.status_code, got.json()) == (200, {"webhook": second})
    changed = {**second, "url": "http://127.0.0.1:9/other", "events": ["*"], "description": "two", "active": False}
    assert (updated.status_code, updated.json()) == (200, {"webhook": changed})
    assert client.get(f"/api/v1/webhooks/{second['id']}").json() == {"webhook": changed}

    deleted = client.post(f"/api/v1/webhooks/{first['id']}/delete")

    assert (deleted.status_code, deleted.json()) == (200, {"success": True})
    assert list(Webhook.objects.values_list("id", flat=True)) == [second["id"]]
    assert client.get(f"/api/v1/webhooks/{first['id']}").status_code == 404
    project.refresh_from_db()
    assert project.has_active_webhooks is False  # the one left is switched off


def test_update_changes_only_what_is_sent(client_for, project, manager):
    client = client_for(manager)
    webhook, _ = create_webhook(client, project.id, HOOK, events=["ticket.moved"], description="keep")
    response = client.post(f"/api/v1/webhooks/{webhook['id']}/update", {}, format="json")
    assert (response.status_code, response.json()) == (200, {"webhook": webhook})


def test_rotate_secret_answers_a_new_one(client_for, project, manager):
    client = client_for(manager)
    webhook, old = create_webhook(client, project.id, HOOK)

    response = client.post(f"/api/v1/webhooks/{webhook['id']}/rotate-secret")

    new = response.json()["secret"]
    assert (response.status_code, response.json()) == (200, {"webhook": webhook, "secret": new})
    assert new != old and new.startswith("whsec_")
    stored = Webhook.objects.get()
    assert (keys.unseal(stored.secret), keys.unseal(stored.previous_secret)) == (new, old)


def test_the_deliveries_list_is_limited(client_for, project, manager, django_assert_max_num_queries):
    client = client_for(manager)
    webhook, _ = create_webhook(client, project.id, HOOK)
    hook = Webhook.objects.get()
    Delivery.objects.bulk_create(Delivery(webhook=hook, message_id=f"msg_{n}", event="tag.created", seq=n,
                                          payload={"event": "tag.created", "seq": n}, status="delivered")
                                 for n in range(1, 121))
    url = f"/api/v1/webhooks/{webhook['id']}/deliveries"

    with django_assert_max_num_queries(5):
        default = client.get(url)
    with django_assert_max_num_queries(5):
        three = client.get(url, {"limit": 3})
    with django_assert_max_num_queries(5):
        most = client.get(url, {"limit": 100})

    assert [d["seq"] for d in default.json()["deliveries"]] == list(range(120, 70, -1))
    assert [d["message_id"] for d in three.json()["deliveries"]] == ["msg_120", "msg_119", "msg_118"]
    assert len(most.json()["deliveries"]) == 100


@pytest.mark.parametrize("limit", ["0", "101", "x", "-1"])
def test_a_bad_deliveries_limit_is_refused(client_for, project, manager, limit):
    client = client_for(manager)
    webhook, _ = create_webhook(client, project.id, HOOK)
    response = client.get(f"/api/v1/webhooks/{webhook['id']}/deliveries", {"limit": limit})
    assert (response.status_code, response.json()["field"]) == (422, "limit")


# ---- who may call -------------------------------------------------------------------------------

def webhook_routes(webhook_id: int, delivery_id: int) -> list[tuple[str, str, dict | None]]:
    base = f"/api/v1/webhooks/{webhook_id}"
    return [("get", base, None), ("post", f"{base}/update", {"description": "x"}), ("post", f"{base}/rotate-secret", None),
            ("post", f"{base}/ping", None), ("get", f"{base}/deliveries", None),
            ("post", f"{base}/deliveries/{delivery_id}/redeliver", None), ("post", f"{base}/delete", None)]


@pytest.fixture
def registered(project):
    webhook = Webhook.objects.create(project=project, url=HOOK, events=["*"], secret=keys.seal(keys.new_secret()))
    delivery = Delivery.objects.create(webhook=webhook, message_id="msg_1", event="tag.created", seq=1,
                                       payload={"event": "tag.created"}, status="failed")
    return webhook, delivery


def snapshot(project) -> tuple:
    return (list(Webhook.objects.filter(project=project).values()), list(Delivery.objects.values()))


@pytest.mark.parametrize("role", ROLES_BELOW_MANAGER)
def test_other_members_are_refused_403(client_for, project, member_with, role, registered):
    client = client_for(member_with(role))
    before = snapshot(project)
    answers = [getattr(client, method)(path, body, format="json").status_code
               for method, path, body in [("get", webhooks_url(project.id), None),
                                          ("post", webhooks_url(project.id), {"url": HOOK}),
                                          *webhook_routes(registered[0].id, registered[1].id)]]
    assert answers == [403] * 9
    assert snapshot(project) == before


def test_non_members_get_404_and_anonymous_callers_401(client_for, anonymous, project, outsider, registered):
    MembershipFactory(user=outsider, project=ProjectFactory())  # a manager elsewhere is still an outsider here
    before = snapshot(project)
    routes = [("get", webhooks_url(project.id), None), ("post", webhooks_url(project.id), {"url": HOOK}),
              *webhook_routes(registered[0].id, registered[1].id)]
    outside = [getattr(client_for(outsider), method)(path, body, format="json") for method, path, body in routes]
    nobody = [getattr(anonymous, method)(path, body, format="json").status_code for method, path, body in routes]
    assert [response.status_code for response in outside] == [404] * 9
    assert {response.json()["error"] for response in outside} == {"project not found", "webhook not found"}
    assert nobody == [401] * 9
    assert snapshot(project) == before


def test_a_manager_of_another_project_cannot_reach_this_ones_webhooks(client_for, project, registered):
    other = ProjectFactory()
    client = client_for(other.owner)
    assert client.get(f"/api/v1/webhooks/{registered[0].id}").status_code == 404
    assert client.get(webhooks_url(other.id)).json() == {"webhooks": []}


def test_a_delivery_of_another_webhook_is_not_found(client_for, project, manager, registered):
    client = client_for(manager)
    mine, _ = create_webhook(client, project.id, HOOK)
    response = client.post(f"/api/v1/webhooks/{mine['id']}/deliveries/{registered[1].id}/redeliver")
    assert (response.status_code, response.json()) == (404, {"code": "not_found", "error": "delivery not found"})
    assert Delivery.objects.count() == 1


def test_unknown_webhooks_are_not_found(client_for, manager):
    response = client_for(manager).get("/api/v1/webhooks/999999")
    assert (response.status_code, response.json()) == (404, {"code": "not_found", "error": "webhook not found"})


# ---- refusals ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("body", "field", "error"), [
    ({}, "url", "url is required"),
    ({"url": 12}, "url", "url: Not a valid string."),
    ({"url": ""}, "url", "url cannot be empty"),
    ({"url": "ftp://127.0.0.1/x"}, "url", "url must start with http:// or https://"),
    ({"url": "127.0.0.1/x"}, "url", "url must start with http:// or https://"),
    ({"url": "http://"}, "url", "url must name a host"),
    ({"url": "http://user:pw@127.0.0.1/x"}, "url", "url must not contain credentials"),
    ({"url": "http://token@127.0.0.1/x"}, "url", "url must not contain credentials"),
    ({"url": "http://127.0.0.1:99999/x"}, "url", "url has an invalid host or port"),
    ({"url": "http://127.0.0.1/x#part"}, "url", "url must not have a fragment"),
    ({"url": "http://127.0.0.1/a b"}, "url", "url must not contain spaces or control characters"),
    ({"url": "http://10.1.2.3/x"}, "url", "url's host 10.1.2.3 is not a public address"),
    ({"url": "http://192.168.0.1/x"}, "url",
     "url's host 192.168.0.1 is not a public address"),
    ({"url": "http://169.254.169.254/latest"}, "url",
     "url's host 169.254.169.254 is not a public address"),
    ({"url": "http://[::1]/x"}, "url", "url's host ::1 is not a public address"),
    ({"url": "http://[::1/x"}, "url", "url has an invalid host or port"),
    ({"url": "http://[fec0::1]/x"}, "url", "url's host fec0::1 is not a public address"),
    ({"url": "http://[::ffff:10.0.0.1]/x"}, "url", "url's host ::ffff:10.0.0.1 is not a public address"),
    ({"url": "http://224.0.0.1/x"}, "url", "url's host 224.0.0.1 is not a public address"),
    ({"url": "http://0.0.0.0/x"}, "url", "url's host 0.0.0.0 is not a public address"),
    ({"url": "http://localhost:8000/x"}, "url", "url's host localhost is a loopback name"),
    ({"url": "http://" + "a" * 1990 + ".example/"}, "url", "url: Ensure this field has no more than 2000 characters."),
    ({"url": HOOK, "events": []}, "events", "events: This list may not be empty."),
    ({"url": HOOK, "events": "ticket.created"}, "events", 'events: Expected a list of items but got type "str".'),
    ({"url": HOOK, "events": ["ticket.created", "ticket.exploded"]}, "events",
     "events[1]: unknown event kind ticket.exploded"),
    ({"url": HOOK, "events": ["resync_required"]}, "events", "events[0]: unknown event kind resync_required"),
    ({"url": HOOK, "events": ["notification.created"]}, "events",
     "events[0]: unknown event kind notification.created"),
    ({"url": HOOK, "events": [3]}, "events", "events[0]: unknown event kind 3"),
    ({"url": HOOK, "events": ["*", "ticket.created"]}, "events", 'events: "*" stands for every event kind: send it alone'),
    ({"url": HOOK, "description": ["x"]}, "description", "description: Not a valid string."),
    ({"url": HOOK, "description": "x" * 501}, "description",
     "description: Ensure this field has no more than 500 characters."),
])
def test_create_refuses_bad_input(client_for, project, manager, body, field, error):
    response = client_for(manager).post(webhooks_url(project.id), body, format="json")
    assert (response.status_code, response.json()) == (422, {
        "code": "validation_failed", "error": error, "field": field})
    assert Webhook.objects.count() == 0
    project.refresh_from_db()
    assert project.has_active_webhooks is False


@pytest.mark.parametrize("host", ["127.1", "2130706433", "0x7f.1", "0x7f000001", "0177.0.0.1", "10.1"])
def test_create_refuses_the_numeric_forms_of_private_addresses(client_for, project, manager, settings, host):
    """Forms the system's resolver reads as IPv4 addresses (127.1 is 127.0.0.1, 10.1 is 10.0.0.1)."""
    settings.WEBHOOK_ALLOWED_PRIVATE_HOSTS = []
    response = client_for(manager).post(webhooks_url(project.id), {"url": f"http://{host}/x"}, format="json")
    assert (response.status_code, response.json()) == (
        422, {"code": "validation_failed", "error": f"url's host {host} is not a public address", "field": "url"})
    assert Webhook.objects.count() == 0


@pytest.mark.parametrize(("body", "field"), [
    ({"active": "yes"}, "active"), ({"active": 1}, "active"), ({"active": None}, "active"),
    ({"url": "http://10.0.0.1/"}, "url"), ({"url": "https://a:b@127.0.0.1/"}, "url"), ({"url": None}, "url"),
    ({"url": "https://[::1"}, "url"), ({"url": "https://[fec0::2]/"}, "url"),
    ({"events": ["nope"]}, "events"), ({"events": []}, "events"), ({"description": 5}, "description"),
])
def test_update_refuses_bad_input(client_for, project, manager, body, field):
    client = client_for(manager)
    webhook, _ = create_webhook(client, project.id, HOOK)
    before = snapshot(project)
    response = client.post(f"/api/v1/webhooks/{webhook['id']}/update", body, format="json")
    assert (response.status_code, response.json()["field"]) == (422, field)
    assert snapshot(project) == before


def test_a_project_has_at_most_twenty_webhooks(client_for, project, manager):
    client = client_for(manager)
    for _ in range(20):
        create_webhook(client, project.id, HOOK)
    response = client.post(webhooks_url(project.id), {"url": HOOK}, format="json")
    assert (response.status_code, response.json()) == (422, {
        "code": "validation_failed", "error": "a project has at most 20 webhooks"})
    assert Webhook.objects.count() == 20


def test_every_event_kind_of_the_log_can_be_chosen(client_for, project, manager):
    webhook, _ = create_webhook(client_for(manager), project.id, HOOK, events=LOG_EVENTS)
    assert webhook["events"] == LOG_EVENTS and "ticket.created" in LOG_EVENTS and "tag.deleted" in LOG_EVENTS
