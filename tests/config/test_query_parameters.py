"""Every list and read of the API refuses a query parameter it does not take (422 naming it), as the ticket list
does: a misspelt filter must never silently answer everything. One rule in the base view (core.api.base), fed by
what each view declares, which is what its schema says."""

import re

import pytest
from django.urls import resolve

from tests.factories import (
    ArticleAttachmentFactory,
    ArticleFactory,
    AttachmentFactory,
    FolderFactory,
    TicketFactory,
)
from tests.schema import schema
from transfers.models import Job, JobKind
from webhooks.models import Webhook

READ_PATHS = sorted(path for path, item in schema()["paths"].items() if "get" in item)


def declared_query(path: str) -> set[str]:
    return {parameter["name"] for parameter in schema()["paths"][path]["get"].get("parameters", [])
            if parameter["in"] == "query"}


@pytest.mark.parametrize("path", READ_PATHS)
def test_what_a_view_takes_is_what_its_schema_declares(path):
    match = resolve(re.sub(r"\{[a-z_]+\}", "1", path))
    view, action = match.func.cls, match.func.actions["get"]

    assert view.parameter_names(action) == declared_query(path)


@pytest.fixture
def objects(project, manager):
    """One object of each kind a read path names, in the manager's project."""
    ticket = TicketFactory(project=project)
    article = ArticleFactory(project=project, folder=FolderFactory(project=project))
    return {"project_id": project.id, "number": ticket.number, "ticket_id": ticket.id,
            "attachment_id": AttachmentFactory(ticket=ticket).id, "article_id": article.id,
            "folder_id": article.folder_id,
            "webhook_id": Webhook.objects.create(project=project, url="https://hooks.example.com/", secret="x").id,
            "job_id": Job.objects.create(kind=JobKind.EXPORT, project=project, created_by=manager).id}


@pytest.mark.parametrize("path", READ_PATHS)
def test_a_read_refuses_a_parameter_it_does_not_take(client_for, manager, objects, path):
    if "attachments/{attachment_id}" in path and path.startswith("/api/v1/projects/"):
        objects = {**objects, "attachment_id": ArticleAttachmentFactory(article_id=objects["article_id"]).id}
    url = path.format(**objects)

    response = client_for(manager).get(url, {"colour": "blue"})

    assert (response.status_code, response.json()) == (422, {
        "code": "validation_failed", "error": "colour: unknown query parameter", "field": "colour"})


def test_a_write_is_not_refused_for_its_query_string(client_for, manager, project):
    response = client_for(manager).post(f"/api/v1/projects/{project.id}/tickets?source=import", {"title": "Kept"})

    assert response.status_code == 201
