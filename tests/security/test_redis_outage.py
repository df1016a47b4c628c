"""When Redis, which holds the rate limits' counters, refuses connections or hangs: an API request or a websocket
handshake is answered 503 with Retry-After within REDIS_TIMEOUT, as JSON, and does nothing; nothing waits for
Redis for ever."""

import time

from rest_framework.test import APIClient

from accounts.services import issue_token
from tests.conftest import REDIS_TIMEOUT
from tickets.models import Ticket

BUSY = {"code": "unavailable", "error": "the service is busy, try again shortly"}


def assert_busy(response):
    assert (response.status_code, response.json(), response["Retry-After"]) == (503, BUSY, "1")


def test_a_request_without_a_token_is_answered_503_when_redis_hangs(db, hung_redis):
    started = time.monotonic()
    response = APIClient().get("/api/v1/projects")
    assert_busy(response)
    assert time.monotonic() - started < 10 * REDIS_TIMEOUT  # the client's timeout, not Redis's silence, ended it


def test_a_token_s_write_is_refused_and_does_nothing_when_redis_refuses(manager, project, refused_redis):
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {issue_token(user=manager)[1]}")

    response = client.post(f"/api/v1/projects/{project.id}/tickets", {"title": "Lost?"}, format="json")

    assert_busy(response)
    assert not Ticket.objects.filter(project=project).exists()


def test_a_token_s_read_is_answered_503_when_redis_hangs(manager, hung_redis):
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {issue_token(user=manager)[1]}")
    assert_busy(client.get("/api/v1/projects"))
