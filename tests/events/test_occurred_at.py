"""One event, one time: every copy of a frame (the board socket's, the feed's, a replay's) carries `occurred_at`,
when the event happened, the same in each (webhook messages: tests/webhooks/test_attempts.py)."""

from datetime import UTC, datetime, timedelta

from django.utils import timezone

from core.time import timestamp
from events.models import ProjectEvent
from events.publish import board_group
from events.selectors import frames_between
from tests.conftest import GroupListener


def test_the_socket_the_feed_and_a_replay_carry_the_same_time(client_for, project, manager,
                                                              django_capture_on_commit_callbacks):
    listener = GroupListener(board_group(project.id))
    before = timezone.now().replace(microsecond=0)
    with django_capture_on_commit_callbacks(execute=True):
        client_for(manager).post(f"/api/v1/projects/{project.id}/tickets", {"title": "Timed"}, format="json")

    [message] = listener.messages()
    [live] = message["frames"]
    [fed] = client_for(manager).get(f"/api/v1/projects/{project.id}/events").json()["events"]
    [replayed] = frames_between(project_id=project.id, after=0, upto=2)
    occurred_at = datetime.strptime(live["occurred_at"], "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    assert live["occurred_at"] == fed["occurred_at"] == replayed["occurred_at"] == fed["created_at"]
    assert before <= occurred_at <= timezone.now()


def test_a_frame_kept_before_frames_carried_it_is_given_its_row_s_time(client_for, project, manager):
    kept_at = timezone.now() - timedelta(days=3)
    ProjectEvent.objects.create(project=project, seq=1, event="tag.created", actor=manager, created_at=kept_at,
                                payload={"event": "tag.created", "project_id": project.id, "seq": 1,
                                         "actor": {"id": manager.id, "name": manager.display_name}})

    [fed] = client_for(manager).get(f"/api/v1/projects/{project.id}/events").json()["events"]
    [replayed] = frames_between(project_id=project.id, after=0, upto=2)

    assert fed["occurred_at"] == replayed["occurred_at"] == timestamp(kept_at)
