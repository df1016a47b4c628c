"""Trello's board JSON, as "Export as JSON" writes it (samples/trello-board.json)."""

from datetime import UTC, date, datetime

from projects.models import Membership, Project
from tickets.models import ChecklistItem, Comment, Ticket

from .conftest import job_url, sample


def test_a_board_becomes_a_new_project(client_for, outsider, people, start_import, run_jobs, board_frames):
    importer = outsider
    answer = start_import(importer, sample("trello-board.json"), filename="board.json", source="trello",
                          name="Website relaunch", prefix="web")
    assert answer.status_code == 202, answer.json()
    assert answer.json()["job"]["status"] == "queued"
    [job] = run_jobs()
    body = client_for(importer).get(job_url(job.pk)).json()["job"]
    assert body["status"] == "succeeded", body
    project = Project.objects.get(pk=body["project_id"])
    assert (project.name, project.prefix, project.owner) == ("Website relaunch", "WEB", importer)
    # Lists in pos order; default names map onto the default columns; the closed list is a column too.
    assert list(project.statuses.order_by("sort_order").values_list("slug", "label", "category")) == [
        ("todo", "To Do", "todo"), ("in_progress", "Doing", "active"),
        ("waiting_for_legal", "Waiting for legal", "todo"), ("done", "Done", "done"), ("graveyard", "Graveyard", "todo")]
    tickets = {t.number: t for t in Ticket.objects.filter(project=project).select_related("status")}
    assert {n: (t.title, t.status.slug, t.archived_at is not None) for n, t in tickets.items()} == {
        1: ("New logo", "done", False), 2: ("Write the About page", "in_progress", False),
        3: ("Old landing page", "todo", True), 4: ("Cookie banner", "todo", False), 5: ("Flash intro", "graveyard", True)}
    # A card's createCard action names its creator; a card without one was created by the importer.
    assert {n: t.created_by.username for n, t in tickets.items()} == {
        1: importer.username, 2: importer.username, 3: "ada", 4: importer.username, 5: importer.username}
    # Order by pos within a list: Cookie banner (16384) before Old landing page (32768).
    assert tickets[4].sort_order < tickets[3].sort_order
    about = tickets[2]
    assert about.deadline == date(2024, 4, 1)
    assert about.created_at == datetime.fromtimestamp(0x65f0a1b2, UTC)
    assert sorted(u.username for u in about.assignees.all()) == ["ada", "gracehopper"]
    assert [t.name for t in about.tags.all()] == ["Content"]
    assert list(ChecklistItem.objects.filter(ticket=about).order_by("sort_order").values_list("text", "done")) == [
        ("First draft", True), ("Photos of the team", False), ("Legal reads it", False)]
    [comment] = Comment.objects.filter(ticket=about)
    assert (comment.author, comment.message) == (people["grace"], "Copy is in the shared drive, see the @ada mention "
                                                                   "in the doc.")
    assert comment.created_at == datetime(2024, 3, 13, 16, 40, 12, 345000, UTC)
    logo = tickets[1]
    assert sorted(t.name for t in logo.tags.all()) == ["Frontend", "red"]
    assert logo.assignees.count() == 0  # Linus is no user here
    assert logo.description == "Attachments:\n- [logo-v3.png](https://trello.com/1/cards/65f0a1b2c3d4e5f6000000c1/" \
                               "attachments/65f0a1b2c3d4e5f6000000f1/download/logo-v3.png)"
    # The next ticket takes the number after the highest.
    assert project.last_ticket_number == 5
    # Matched people who are not members become viewers.
    assert dict(Membership.objects.filter(project=project).values_list("user__username", "role")) == {
        importer.username: "manager", "ada": "viewer", "gracehopper": "viewer"}
    assert body["report"] == {
        "created": {"tickets": 5, "comments": 2, "checklist_items": 3, "tags": 3, "statuses": 2, "attachments": 0,
                    "time_entries": 0, "folders": 0, "articles": 0},
        "updated": {"tickets": 0}, "skipped": [], "skipped_count": 0,
        "users": {"matched": ["ada", "gracehopper"], "unmatched": ["Linus Torvalds"]}}
