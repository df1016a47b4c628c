"""Reading the event log: every read walks the (project, seq) unique index."""

from django.db.models import QuerySet

from core.time import timestamp
from projects.models import Project

from .models import ProjectEvent


def events_after(*, project_id: int, after: int, limit: int) -> QuerySet[ProjectEvent]:
    """At most `limit` events of the project with seq > `after`, oldest first."""
    return (ProjectEvent.objects.filter(project_id=project_id, seq__gt=after).order_by("seq")
            .only("seq", "payload", "created_at")[:limit])


def frames_between(*, project_id: int, after: int, upto: int) -> list[dict]:
    """The kept frames with `after` < seq < `upto`, in order."""
    return [kept_frame(payload, created_at) for payload, created_at in
            ProjectEvent.objects.filter(project_id=project_id, seq__gt=after, seq__lt=upto)
            .order_by("seq").values_list("payload", "created_at")]


def kept_frame(payload: dict, created_at) -> dict:
    """A kept frame as it was sent; one kept before frames carried `occurred_at` gets its row's time, the same."""
    return payload if "occurred_at" in payload else {**payload, "occurred_at": timestamp(created_at)}


def latest_seq(*, project_id: int) -> int:
    """The seq of the project's last committed frame (0 before its first)."""
    return Project.objects.values_list("board_seq", flat=True).get(pk=project_id)
