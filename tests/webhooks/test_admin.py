"""Staff read webhooks and deliveries in the admin, and send a delivery again from there."""

import pytest

from webhooks import keys
from webhooks.models import Delivery, Webhook

from .conftest import recorded
from .receivers import Answer

pytestmark = pytest.mark.usefixtures("sending")


@pytest.fixture
def failed_delivery(project, receiver):
    endpoint = receiver(Answer(status=200, body=b"thanks"))
    webhook = Webhook.objects.create(project=project, url=endpoint.url, events=["*"], description="Chat",
                                     secret=keys.seal(keys.new_secret()))
    delivery = Delivery.objects.create(webhook=webhook, message_id="msg_admin", event="tag.created", seq=3,
                                       payload={"event": "tag.created", "seq": 3}, status="failed", attempts=8,
                                       response_status=500, error="answered 500")
    return endpoint, delivery


def test_staff_read_webhooks_and_deliveries(staff, failed_delivery):
    _, delivery = failed_delivery
    pages = {url: staff.get(url) for url in [
        "/admin/webhooks/webhook/", f"/admin/webhooks/webhook/{delivery.webhook_id}/change/",
        "/admin/webhooks/delivery/", f"/admin/webhooks/delivery/{delivery.id}/change/"]}
    assert {url: page.status_code for url, page in pages.items()} == dict.fromkeys(pages, 200)
    assert "msg_admin" in pages["/admin/webhooks/delivery/"].content.decode()
    assert "Chat" in pages[f"/admin/webhooks/webhook/{delivery.webhook_id}/change/"].content.decode()
    # Read only: nothing to add, and no secret shown, sealed or not.
    assert staff.get("/admin/webhooks/webhook/add/").status_code == 403
    page = pages[f"/admin/webhooks/webhook/{delivery.webhook_id}/change/"].content.decode()
    assert delivery.webhook.secret not in page and "whsec_" not in page


def test_the_redeliver_action_sends_the_message_again(staff, failed_delivery, committed):
    endpoint, delivery = failed_delivery

    with committed():
        response = staff.post("/admin/webhooks/delivery/", {"action": "redeliver", "_selected_action": [delivery.id]})

    assert response.status_code == 302
    [received] = endpoint.wait_for(1)
    recorded()
    assert (received.message_id, received.frame()) == ("msg_admin", {"event": "tag.created", "seq": 3})
    assert list(Delivery.objects.order_by("id").values_list("message_id", "status", "attempts")) == [
        ("msg_admin", "delivered", 8), ("msg_admin", "delivered", 1)]  # the message arrived: the original is settled
