"""Again and again (nothing written twice: tickets found again are updated) and quiet (no notification, no
per-ticket frame or webhook: one project.imported frame at the end)."""

import json

from events.models import ProjectEvent
from notifications.models import Notification
from projects.models import Project
from tests.factories import TicketFactory
from tickets.models import ChecklistItem, Comment, Ticket
from transfers.models import SourceLink
from webhooks.models import Delivery, Webhook

from .conftest import job_url, sample


def counts(project) -> tuple:
    return (Ticket.objects.filter(project=project).count(), Comment.objects.filter(ticket__project=project).count(),
            ChecklistItem.objects.filter(ticket__project=project).count(), project.tags.count(),
            project.statuses.count())


def test_the_same_file_again_into_the_same_project_duplicates_nothing(client_for, project, manager, people,
                                                                     start_import, run_jobs):
    TicketFactory(project=project, title="Already here")  # number 1: the board's cards come after it
    board = sample("trello-board.json")
    start_import(manager, board, filename="board.json", source="trello", project_id=project.pk)
    [first] = run_jobs()
    assert first.status == "succeeded", first.error
    assert first.report["created"]["tickets"] == 5
    assert sorted(Ticket.objects.filter(project=project).values_list("number", flat=True)) == [1, 2, 3, 4, 5, 6]
    before = counts(project)
    # The card's title changed in Trello since: the ticket is updated, not written again.
    changed = json.loads(board)
    changed["cards"][0]["name"] = "Write the About page (v2)"
    start_import(manager, json.dumps(changed).encode(), filename="board.json", source="trello", project_id=project.pk)
    [second] = run_jobs()
    assert second.status == "succeeded", second.error
    assert counts(project) == before
    assert second.report["created"] == dict.fromkeys(second.report["created"], 0)
    assert second.report["updated"] == {"tickets": 5}
    assert Ticket.objects.filter(project=project, title="Write the About page (v2)").count() == 1
    assert SourceLink.objects.filter(project=project, kind="ticket").count() == 5
    project.refresh_from_db()
    assert project.last_ticket_number == 6


def test_an_import_is_quiet_but_for_one_frame_at_its_end(client_for, project, manager, editor, people,
                                                         start_import, run_jobs, board_frames):
    Webhook.objects.create(project=project, url="https://hooks.example.com/in", events=["*"], secret="x",
                           created_by=manager)
    Project.objects.filter(pk=project.pk).update(has_active_webhooks=True)
    listener = board_frames(project.pk)
    start_import(manager, sample("jira-all-fields.csv"), filename="jira.csv", source="jira", project_id=project.pk)
    [job] = run_jobs()
    assert job.status == "succeeded", job.error
    frame = {"event": "project.imported", "project_id": project.pk, "job_id": job.pk,
             "created": job.report["created"], "updated": {"tickets": 0},
             "actor": {"id": manager.pk, "name": manager.display_name}}
    [message] = listener.messages()
    [sent] = message["frames"]
    assert {key: sent[key] for key in frame} == frame
    assert list(ProjectEvent.objects.filter(project=project).values_list("event", flat=True)) == ["project.imported"]
    assert list(Delivery.objects.values_list("event", flat=True)) == ["project.imported"]
    assert not Notification.objects.exists()  # ada is assigned and mentioned: nobody is notified of an import
    assert client_for(manager).get(job_url(job.pk)).status_code == 200
