"""A client generated from the live schema with openapi-python-client drives the API untouched: no hand
edit, no crash, every value parsed to its type. The generated code talks to the application in this
process (httpx's WSGI transport), so the scenario reads and writes the test's own database."""

import datetime
import importlib
import json
import subprocess
import sys
from io import BytesIO
from pathlib import Path

import httpx
import pytest
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator

from accounts.services import issue_token
from tests.factories import MembershipFactory
from tests.sample_files import png
from tickets import services as ticket_services
from tickets.models import Ticket

PACKAGE = "tracker_client"


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """The client package, generated from the schema this code serves."""
    folder = tmp_path_factory.mktemp("generated")
    schema_file = folder / "schema.json"
    schema_file.write_text(json.dumps(SchemaGenerator().get_schema(request=None, public=True)))
    venv_bin = str(Path(sys.executable).parent)  # the generator formats its output with this ruff
    result = subprocess.run(
        [f"{venv_bin}/openapi-python-client", "generate", "--path", str(schema_file), "--meta", "none",
         "--output-path", str(folder / PACKAGE)],
        capture_output=True, text=True, env={"PATH": venv_bin}, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "WARNING" not in result.stdout + result.stderr, result.stdout + result.stderr
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(folder))
        for name in [name for name in sys.modules if name == PACKAGE or name.startswith(f"{PACKAGE}.")]:
            del sys.modules[name]


@pytest.fixture
def connections_kept_open():
    """As Django's test client does: requests served in the test's transaction keep its connection."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def module(name: str):
    return importlib.import_module(f"{PACKAGE}.{name}")


def test_a_generated_client_runs_the_whole_scenario(generated, manager, editor, connections_kept_open):
    models = module("models")
    client = generated.AuthenticatedClient(
        base_url="http://testserver", token=issue_token(user=manager)[1], raise_on_unexpected_status=True,
        httpx_args={"transport": httpx.WSGITransport(app=get_wsgi_application())})

    projects = module("api.projects.projects_list").sync(client=client)
    assert [project.name for project in projects.projects] == ["Apollo"]
    created = module("api.projects.projects_create").sync(
        client=client, body=models.CreateProjectInputRequest(name="Mobile app", prefix="mob"))
    assert (created.project.name, created.project.prefix) == ("Mobile app", "MOB")
    project_id = created.project.id
    MembershipFactory(project_id=project_id, user=editor)

    tag = module("api.tags.tags_create").sync(project_id, client=client,
                                              body=models.CreateTagInputRequest(name="ios")).tag
    ticket_ref = module("api.tickets.tickets_create").sync(project_id, client=client, body=models.CreateTicketInputRequest(
        title="Crash on start", priority=models.PriorityEnum.HIGH, deadline=datetime.date(2026, 12, 24),
        checklist=["Reproduce", "Fix"], tags=[tag.id])).ticket_ref
    assert ticket_ref == "MOB-1"
    ticket = Ticket.objects.get(project_id=project_id, number=1)

    assert isinstance(module("api.tickets.tickets_update").sync(
        project_id, 1, client=client, body=models.PatchedUpdateTicketInputRequest(priority=None, deadline=None)),
        models.Ok)
    module("api.tickets.tickets_move").sync(project_id, 1, client=client,
                                            body=models.MoveTicketInputRequest(status="in_progress"))
    detail = module("api.tickets.tickets_retrieve").sync(project_id, 1, client=client).ticket
    assert (detail.priority, detail.deadline, detail.status, [item.text for item in detail.checklist]) == (
        None, None, "in_progress", ["Reproduce", "Fix"])
    assert isinstance(detail.created_at, str) and detail.tags[0].name == "ios"

    comment = module("api.comments.comments_comment").sync(project_id, 1, client=client,
                                                           body=models.CommentInputRequest(comment="Seen on 17.2"))
    assert isinstance(comment.reaction_id, int)
    found = module("api.tickets.tickets_search").sync(project_id, client=client, q="crash")
    assert (found.total, found.tickets[0].prefix_ref, found.tickets[0].matches[0].field) == (1, "MOB-1", "title")
    board = module("api.projects.projects_board").sync(project_id, client=client)
    assert [card.id for column in board.columns for card in column.tickets] == [ticket.id]
    assert board.columns[2].tickets[0].checklist_total == 2

    upload = module("api.attachments.attachments_create").sync(ticket.id, client=client, body=models.AttachmentUploadRequest(
        files=[generated.types.File(payload=BytesIO(png()), file_name="shot.png", mime_type="image/png")]))
    [attachment] = upload.attachments
    assert (attachment.original_name, attachment.mime_type) == ("shot.png", "image/png")
    downloaded = module("api.attachments.attachments_download").sync(attachment.id, client=client)
    assert downloaded.payload.read() == png()

    timer = module("api.time_tracking.time_tracking_start").sync(ticket.id, client=client).entry
    assert (timer.is_running, timer.ticket_ref) == (1, "MOB-1")
    stopped = module("api.time_tracking.time_tracking_stop").sync(timer.id, client=client).entry
    assert (stopped.is_running, stopped.minutes, isinstance(stopped.stopped_at, str)) == (0, 1, True)
    report = module("api.time_tracking.time_tracking_report_csv").sync(
        project_id, client=client, group_by=models.TimeTrackingReportCsvGroupBy.TICKET)
    assert report == f"ticket_id,ticket_ref,title,minutes\r\n{ticket.id},MOB-1,Crash on start,1\r\n"

    ticket_services.add_comment(ticket=ticket, author=editor, message="On it")
    notifications = module("api.notifications.notifications_list").sync(client=client).notifications
    assert [(n.type_, n.ticket_id) for n in notifications] == [(models.NotificationTypeEnum.REACTION, ticket.id)]

    article = module("api.docs.docs_article_create").sync(project_id, client=client, body=models.CreateArticleInputRequest(
        title="Release checklist", content="# Steps")).article
    assert (article.slug, article.folder_id) == ("release-checklist", None)

    retried = [module("api.tickets.tickets_create").sync(
        project_id, client=client, body=models.CreateTicketInputRequest(title="Sent twice"),
        idempotency_key="a1b2c3-retry").ticket_ref for _ in range(2)]
    assert (retried, Ticket.objects.filter(title="Sent twice").count()) == (["MOB-2", "MOB-2"], 1)
