"""Jira's "Export Excel CSV (all fields)" (samples/jira-all-fields.csv): repeated headers, Jira's dates."""

from datetime import UTC, date, datetime

from projects.models import Project
from tickets.models import Blocker, Comment, Ticket

from .conftest import job_url, sample


def test_an_all_fields_csv_becomes_a_new_project(client_for, outsider, people, start_import, run_jobs):
    answer = start_import(outsider, sample("jira-all-fields.csv"), filename="Jira.csv", source="jira", name="Shop")
    assert answer.status_code == 202, answer.json()
    [job] = run_jobs()
    body = client_for(outsider).get(job_url(job.pk)).json()["job"]
    assert body["status"] == "succeeded", body
    project = Project.objects.get(pk=body["project_id"])
    assert project.prefix == "SHOP"
    # The default columns stay; a status of its own is added as a to-do column.
    assert list(project.statuses.order_by("sort_order").values_list("slug", "category")) == [
        ("backlog", "backlog"), ("todo", "todo"), ("in_progress", "active"), ("review", "review"), ("done", "done"),
        ("waiting_for_legal", "todo")]
    tickets = {t.number: t for t in Ticket.objects.filter(project=project).select_related("status", "created_by")}
    assert {n: (t.title, t.status.slug, t.type, t.priority, t.story_points) for n, t in tickets.items()} == {
        12: ("Checkout fails with an expired card", "in_progress", "bug", "urgent", 2),
        14: ("Refund button for managers", "todo", "feature", "medium", None),
        3: ("Move to the new payment provider", "done", "feature", "high", 3),
        15: ("Update the terms page", "waiting_for_legal", "feature", "low", None)}
    bug = tickets[12]
    assert bug.created_at == datetime(2024, 3, 12, 15, 4, tzinfo=UTC)
    assert bug.updated_at == datetime(2024, 3, 14, 9, 30, tzinfo=UTC)
    assert bug.deadline == date(2024, 3, 29)
    assert bug.description.startswith("Steps:\n1. Add an item") and bug.description.endswith('a 500, "oops".')
    assert bug.created_by == people["grace"]  # the reporter, by e-mail
    assert [u.username for u in bug.assignees.all()] == ["ada"]
    assert sorted(t.name for t in bug.tags.all()) == ["payments", "regression"]
    assert tickets[3].created_at == datetime(2024, 2, 1, 8, 0, tzinfo=UTC)  # ISO 8601, +01:00
    assert tickets[3].done_at == datetime(2024, 2, 20, 17, 45, tzinfo=UTC)
    assert [(c.author.username, c.message, c.created_at) for c in Comment.objects.filter(ticket=bug).order_by(
        "created_at")] == [
        ("gracehopper", "I can reproduce it on staging.", datetime(2024, 3, 12, 15, 20, tzinfo=UTC)),
        (outsider.username, "**mallory** (imported from Jira): Is this a duplicate of SHOP-9? It; looks; similar.",
         datetime(2024, 3, 13, 10, 2, tzinfo=UTC))]
    # SHOP-12 blocks SHOP-14 (said on both rows: one blocker); SHOP-3 blocks SHOP-12.
    assert sorted(Blocker.objects.filter(ticket__project=project).values_list("blocker__number", "ticket__number")) == [
        (3, 12), (12, 14)]
    assert project.last_ticket_number == 15
    report = body["report"]
    assert report["created"]["tickets"] == 4 and report["created"]["comments"] == 2
    assert report["users"] == {"matched": ["ada", "gracehopper"], "unmatched": ["mallory"]}
    assert report["skipped"] == [
        {"item": "row 6 (SHOP-16)", "reason": "no title"},
        {"item": "row 3 (SHOP-14)", "reason": "story points 5 outside 0-3: dropped"},
        {"item": "row 5 (SHOP-15).Outward issue link (Blocks)",
         "reason": "blocker link to a ticket that is not in the import: SHOP-99"}]
    assert report["skipped_count"] == 3
