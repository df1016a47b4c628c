"""GitHub issues, as `gh issue list --json` writes them and as the REST API answers them (samples/)."""

from datetime import UTC, datetime

from projects.models import Project
from tickets.models import Comment, Ticket

from .conftest import job_url, sample


def imported(client_for, user, start_import, run_jobs, filename: str) -> dict:
    answer = start_import(user, sample(filename), filename=filename, source="github", name="Widgets", prefix="WID")
    assert answer.status_code == 202, answer.json()
    [job] = run_jobs()
    body = client_for(user).get(job_url(job.pk)).json()["job"]
    assert body["status"] == "succeeded", body
    return body


def test_gh_issue_list_json(client_for, outsider, people, start_import, run_jobs):
    body = imported(client_for, outsider, start_import, run_jobs, "gh-issue-list.json")
    project = Project.objects.get(pk=body["project_id"])
    tickets = {t.number: t for t in Ticket.objects.filter(project=project).select_related("status", "created_by")}
    assert {n: (t.title, t.status.slug, t.type) for n, t in tickets.items()} == {
        42: ("make test fails on a clean checkout", "todo", "bug"), 7: ("Document the release steps", "done", "feature")}
    issue = tickets[42]
    assert issue.created_by == people["grace"]
    assert [u.username for u in issue.assignees.all()] == ["ada"]
    assert sorted(t.name for t in issue.tags.all()) == ["bug", "good first issue"]
    assert project.tags.get(name="bug").color == "#d73a4a"
    assert [(c.author.username, c.message) for c in Comment.objects.filter(ticket=issue).order_by("created_at")] == [
        ("ada", "PyYAML is missing from requirements-dev.txt."),
        (outsider.username, "**octocat** (imported from GitHub): Same here on macOS.")]
    assert tickets[7].done_at == datetime(2024, 2, 20, 16, 30, tzinfo=UTC)
    assert project.last_ticket_number == 42
    assert body["report"]["users"] == {"matched": ["ada", "gracehopper"], "unmatched": ["octocat"]}


def test_rest_api_issues_without_the_pull_requests(client_for, outsider, people, start_import, run_jobs):
    body = imported(client_for, outsider, start_import, run_jobs, "github-rest-issues.json")
    tickets = {t.number: t for t in Ticket.objects.filter(project_id=body["project_id"]).select_related("status")}
    assert {n: (t.title, t.status.slug, t.type) for n, t in tickets.items()} == {
        43: ("Widgets render twice on Safari", "todo", "bug"), 40: ("Add a dark theme", "done", "feature")}
    assert [u.username for u in tickets[43].assignees.all()] == ["gracehopper"]
    assert tickets[40].description == ""
    assert body["report"]["skipped"] == [{"item": "[1]", "reason": "a pull request"}]
