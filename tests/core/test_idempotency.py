"""Idempotency-Key on every POST: a retry gets the first answer again and does nothing else; the key is the
caller's, kept 24 hours; reused with another request 422, while the first is served 409, malformed 400."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.http import HttpRequest
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core.models import IdempotencyKey
from events.models import ProjectEvent
from projects.models import Membership
from projects.roles import Role
from projects.services import remove_member
from tests.factories import TicketFactory
from tests.sample_files import png
from tests.tickets.test_attachments import multipart, upload_url
from tickets.models import Attachment, Ticket
from timetracking.models import TimeEntry

KEY = "4f1c2a9e-7d4b-4a3e-9c51-0b8f6e2d7a13"


def create_url(project) -> str:
    return f"/api/v1/projects/{project.id}/tickets"


def keyed(client, url: str, body=None, key: str = KEY, **extra):
    return client.post(url, body, format="json", HTTP_IDEMPOTENCY_KEY=key, **extra)


def answer(response) -> tuple:
    return response.status_code, response.json(), response.get("Idempotent-Replayed")


class TestRetries:
    def test_a_retried_create_makes_one_ticket_and_gets_the_first_answer_again(self, client_for, project, editor):
        api = client_for(editor)
        first = keyed(api, create_url(project), {"title": "Crash on start"})
        events = ProjectEvent.objects.count()
        retry = keyed(api, create_url(project), {"title": "Crash on start"})

        assert answer(first) == (201, {"ticket_ref": "APL-1"}, None)
        assert answer(retry) == (201, {"ticket_ref": "APL-1"}, "true")
        assert retry["Content-Type"] == "application/json"
        assert list(Ticket.objects.values_list("title", flat=True)) == ["Crash on start"]
        assert ProjectEvent.objects.count() == events  # no second broadcast either

    def test_a_post_without_a_body_is_keyed_too(self, client_for, project, editor):
        ticket = TicketFactory(project=project)
        api = client_for(editor)
        first = keyed(api, f"/api/v1/tickets/{ticket.id}/time-entries/start")
        retry = keyed(api, f"/api/v1/tickets/{ticket.id}/time-entries/start")

        assert (retry.status_code, retry.json(), retry["Idempotent-Replayed"]) == (200, first.json(), "true")
        assert TimeEntry.objects.count() == 1

    def test_an_error_answer_is_kept_as_well(self, client_for, project, editor):
        api = client_for(editor)
        first = keyed(api, create_url(project), {"title": ""})
        retry = keyed(api, create_url(project), {"title": ""})

        assert answer(first) == (422, {
            "code": "validation_failed", "error": "title cannot be empty", "field": "title"}, None)
        assert answer(retry) == (422, {
            "code": "validation_failed", "error": "title cannot be empty", "field": "title"}, "true")
        assert not Ticket.objects.exists()

    def test_a_server_error_frees_the_key_for_a_retry(self, client_for, project, editor, monkeypatch):
        from tickets import services

        create_ticket = services.create_ticket
        monkeypatch.setattr(services, "create_ticket", lambda **kwargs: 1 / 0)
        api = client_for(editor)
        failed = keyed(api, create_url(project), {"title": "Flaky"})
        monkeypatch.setattr(services, "create_ticket", create_ticket)
        retry = keyed(api, create_url(project), {"title": "Flaky"})

        assert (failed.status_code, failed.json()) == (500, {"code": "server_error", "error": "internal server error"})
        assert answer(retry) == (201, {"ticket_ref": "APL-1"}, None)
        assert Ticket.objects.count() == 1

    def test_the_key_is_the_callers_own(self, client_for, project, editor, manager):
        mine = keyed(client_for(editor), create_url(project), {"title": "Same words"})
        theirs = keyed(client_for(manager), create_url(project), {"title": "Same words"})

        assert (answer(mine), answer(theirs)) == ((201, {"ticket_ref": "APL-1"}, None),
                                                  (201, {"ticket_ref": "APL-2"}, None))

    def test_another_token_of_the_same_user_replays(self, client_for, project, editor):
        keyed(client_for(editor), create_url(project), {"title": "From the laptop"})
        retry = keyed(client_for(editor), create_url(project), {"title": "From the laptop"})

        assert answer(retry) == (201, {"ticket_ref": "APL-1"}, "true")
        assert Ticket.objects.count() == 1

    def test_a_replay_reads_no_more_than_the_token_and_the_key(self, client_for, project, editor,
                                                                django_assert_num_queries):
        api = client_for(editor)
        keyed(api, create_url(project), {"title": "Once"})
        # the token's lookup, the membership (access is checked before a replay) with the first status a creation
        # reads (one round trip on PostgreSQL), the claim that finds the key taken, its answer
        with django_assert_num_queries(5):
            assert keyed(api, create_url(project), {"title": "Once"}).status_code == 201

    def test_a_caller_who_left_the_project_gets_no_replay(self, client_for, project, editor):
        api = client_for(editor)
        keyed(api, create_url(project), {"title": "Secret plans"})
        remove_member(project=project, user=editor)
        retry = keyed(api, create_url(project), {"title": "Secret plans"})

        assert answer(retry) == (404, {"error": "project not found", "code": "not_found"}, None)
        assert list(Ticket.objects.values_list("title", flat=True)) == ["Secret plans"]

    def test_a_caller_whose_role_no_longer_allows_the_request_gets_no_replay(self, client_for, project, editor):
        api = client_for(editor)
        ticket = TicketFactory(project=project)
        url = f"/api/v1/projects/{project.id}/tickets/{ticket.number}/archive"
        assert keyed(api, url).status_code == 200
        Membership.objects.filter(project=project, user=editor).update(role=Role.VIEWER)
        retry = keyed(api, url)

        assert (retry.status_code, retry.get("Idempotent-Replayed")) == (403, None)


class TestRefusals:
    @pytest.mark.parametrize(("url", "body"), [
        ("/api/v1/projects/{project}/tags", {"title": "Crash on start"}),  # another path
        ("/api/v1/projects/{project}/tickets", {"title": "Crash on start!"}),  # another body
        ("/api/v1/projects/{project}/tickets?source=retry", {"title": "Crash on start"}),  # another query
    ])
    def test_the_same_key_with_another_request_is_a_422(self, client_for, project, manager, url, body):
        api = client_for(manager)  # who may post to each of these paths: access is checked before the key
        keyed(api, create_url(project), {"title": "Crash on start"})
        reused = keyed(api, url.format(project=project.id), body)

        assert answer(reused) == (422, {"code": "validation_failed",
            "error": "this Idempotency-Key was already used with another request (method, path or body)"}, None)
        assert list(Ticket.objects.values_list("title", flat=True)) == ["Crash on start"]
        assert project.tags.count() == 0

    def test_while_the_first_is_served_a_retry_is_a_409(self, client_for, project, editor):
        api = client_for(editor)
        keyed(api, create_url(project), {"title": "Slow"})
        IdempotencyKey.objects.update(status=None, body=None, headers=None)  # as while its handler runs
        retry = keyed(api, create_url(project), {"title": "Slow"})
        reused = keyed(api, create_url(project), {"title": "Fast"})

        assert answer(retry) == (409, {
            "code": "idempotency_conflict", "error": "a request with this Idempotency-Key is still being served: "
                                                "retry later"}, None)
        assert retry["Retry-After"] == "1"
        assert reused.status_code == 422  # another body is refused for good, not asked to wait
        assert Ticket.objects.count() == 1

    @pytest.mark.parametrize("key", ["", "x" * 256, "clé", "tab\tinside", "line\x7f"])
    def test_a_malformed_key_is_a_400(self, client_for, project, editor, key):
        response = keyed(client_for(editor), create_url(project), {"title": "Never made"}, key=key)

        assert answer(response) == (400, {
            "code": "bad_request", "error": "Idempotency-Key must be 1 to 255 printable ASCII characters"},
                                    None)
        assert not Ticket.objects.exists() and not IdempotencyKey.objects.exists()

    def test_the_longest_and_the_shortest_keys_are_taken(self, client_for, project, editor):
        api = client_for(editor)
        for key in ["k", "~" * 255]:
            assert keyed(api, create_url(project), {"title": "Kept"}, key=key).status_code == 201
        assert IdempotencyKey.objects.count() == 2

    def test_without_a_caller_nothing_is_kept(self, anonymous, project):
        response = keyed(anonymous, create_url(project), {"title": "Nobody"})

        assert response.status_code == 401
        assert not IdempotencyKey.objects.exists()


class TestLifetime:
    @pytest.mark.parametrize("kept_state", [
        pytest.param({"created_at": timedelta(hours=24, seconds=1)}, id="answered-24-hours-ago"),
        # The process serving it died: the key runs its request once more rather than answer 409 for a day.
        pytest.param({"created_at": timedelta(minutes=5, seconds=1), "status": None, "body": None, "headers": None},
                     id="claimed-5-minutes-ago-never-answered"),
    ])
    def test_a_key_past_its_time_acts_anew(self, client_for, project, editor, kept_state):
        api = client_for(editor)
        keyed(api, create_url(project), {"title": "Daily report"})
        IdempotencyKey.objects.update(**{**kept_state, "created_at": timezone.now() - kept_state["created_at"]})
        again = keyed(api, create_url(project), {"title": "Daily report"})
        replay = keyed(api, create_url(project), {"title": "Daily report"})

        assert (answer(again), answer(replay)) == ((201, {"ticket_ref": "APL-2"}, None),
                                                   (201, {"ticket_ref": "APL-2"}, "true"))

    def test_a_claim_younger_than_5_minutes_is_still_served(self, client_for, project, editor):
        api = client_for(editor)
        keyed(api, create_url(project), {"title": "Slow"})
        IdempotencyKey.objects.update(status=None, created_at=timezone.now() - timedelta(minutes=4, seconds=59))

        assert keyed(api, create_url(project), {"title": "Slow"}).status_code == 409
        assert Ticket.objects.count() == 1

    def test_the_prune_command_removes_the_keys_older_than_24_hours(self, client_for, project, editor):
        api = client_for(editor)
        for key in ["old-1", "old-2", "recent"]:
            keyed(api, create_url(project), {"title": key}, key=key)
        IdempotencyKey.objects.exclude(key="recent").update(created_at=timezone.now() - timedelta(hours=25))
        out = StringIO()
        call_command("pruneidempotencykeys", stdout=out)

        assert out.getvalue().strip() == "2"
        assert list(IdempotencyKey.objects.values_list("key", flat=True)) == ["recent"]
        call_command("pruneidempotencykeys", stdout=out)
        assert out.getvalue().split() == ["2", "0"]


class TestUnkeyed:
    def test_requests_without_a_key_never_touch_the_table(self, client_for, project, editor):
        api = client_for(editor)
        with CaptureQueriesContext(connection) as queries:
            first = api.post(create_url(project), {"title": "Plain"}, format="json")
            second = api.post(create_url(project), {"title": "Plain"}, format="json")

        assert (first.json(), second.json()) == ({"ticket_ref": "APL-1"}, {"ticket_ref": "APL-2"})
        assert not [query for query in queries.captured_queries if "idempotency" in str(query["sql"]).lower()]

    def test_a_key_on_a_read_is_ignored(self, client_for, project, editor):
        response = client_for(editor).get(create_url(project), HTTP_IDEMPOTENCY_KEY="\x00 not even valid")

        assert (response.status_code, response.json()) == (200, {"tickets": []})
        assert not IdempotencyKey.objects.exists()


class TestUploads:
    def test_a_retried_upload_with_another_boundary_stores_the_files_once(self, client_for, project, editor):
        ticket = TicketFactory(project=project)
        api = client_for(editor)
        body = multipart(("shot.png", png()), ("notes.txt", b"steps to reproduce"))
        first = api.post(upload_url(ticket), HTTP_IDEMPOTENCY_KEY=KEY, **body)
        retry = api.post(upload_url(ticket), HTTP_IDEMPOTENCY_KEY=KEY, **with_boundary(body, "another-boundary"))

        assert (first.status_code, retry.status_code, retry["Idempotent-Replayed"]) == (200, 200, "true")
        assert retry.json() == first.json()
        assert sorted(Attachment.objects.values_list("original_name", flat=True)) == ["notes.txt", "shot.png"]

    @pytest.mark.parametrize("files", [
        [("shot.png", png()), ("notes.txt", b"steps to reproduce!")],  # one byte more
        [("shot.png", png()), ("readme.txt", b"steps to reproduce")],  # another name
        [("notes.txt", b"steps to reproduce"), ("shot.png", png())],  # another order
    ])
    def test_other_files_under_the_same_key_are_a_422(self, client_for, project, editor, files):
        ticket = TicketFactory(project=project)
        api = client_for(editor)
        api.post(upload_url(ticket), HTTP_IDEMPOTENCY_KEY=KEY,
                 **multipart(("shot.png", png()), ("notes.txt", b"steps to reproduce")))
        reused = api.post(upload_url(ticket), HTTP_IDEMPOTENCY_KEY=KEY, **multipart(*files))

        assert reused.status_code == 422
        assert Attachment.objects.count() == 2

    def test_an_upload_is_fingerprinted_from_its_parts_not_its_raw_body(self, client_for, project, editor,
                                                                        monkeypatch):
        """The raw body of an upload may be 200 MB: it is never read whole into memory."""
        ticket = TicketFactory(project=project)
        read_whole = []
        body_of = HttpRequest.body.fget

        def body(request):
            read_whole.append(request.path)
            return body_of(request)

        monkeypatch.setattr(HttpRequest, "body", property(body))
        large = png() + b"\0" * (3 * 1024 * 1024)  # spooled to a temporary file, past FILE_UPLOAD_MAX_MEMORY_SIZE
        response = client_for(editor).post(upload_url(ticket), HTTP_IDEMPOTENCY_KEY=KEY,
                                           **multipart(("large.png", large)))

        assert (response.status_code, read_whole) == (200, [])
        assert Attachment.objects.get().file.read() == large  # the handler read the whole file after the hash

    def test_too_many_files_are_refused_as_without_a_key(self, client_for, project, editor):
        ticket = TicketFactory(project=project)
        body = multipart(*[(f"note{n}.txt", b"note") for n in range(21)])
        response = client_for(editor).post(upload_url(ticket), HTTP_IDEMPOTENCY_KEY=KEY, **body)

        assert (response.status_code, response.json()) == (
            422, {"code": "validation_failed", "error": "files: at most 20 files per request", "field": "files"})
        assert not IdempotencyKey.objects.exists() and not Attachment.objects.exists()

    def test_a_multipart_body_to_a_json_operation_is_refused_as_without_a_key(self, client_for, project, editor):
        body = multipart(("shot.png", png()))
        response = client_for(editor).post(create_url(project), HTTP_IDEMPOTENCY_KEY=KEY, **body)

        assert (response.status_code, response.json()["error"]) == (
            415, 'Unsupported media type "multipart/form-data; boundary=tracker-test-boundary" in request.')
        assert not IdempotencyKey.objects.exists() and not Ticket.objects.exists()


def with_boundary(body: dict, boundary: str) -> dict:
    old = body["content_type"].split("boundary=")[1]
    return {"data": body["data"].replace(old.encode(), boundary.encode()),
            "content_type": f"multipart/form-data; boundary={boundary}"}
