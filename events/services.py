from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from .models import ProjectEvent

PRUNE_BATCH = 5000


def prune_events(*, retention_days: int | None = None, batch: int = PRUNE_BATCH) -> int:
    """Delete the events older than the retention period; returns how many went.

    Batches of at most `batch` rows, each its own short transaction over an id range, so writers and
    readers are never held up for long. Rows are numbered under their project's lock, so within a
    project the oldest events are also the lowest seqs: what remains is always a contiguous tail,
    and a viewer asking for a pruned seq is told to reload (events/replay.py).
    """
    days = settings.EVENT_RETENTION_DAYS if retention_days is None else retention_days
    cutoff = timezone.now() - timedelta(days=days)
    removed = 0
    while True:
        ids = list(ProjectEvent.objects.filter(created_at__lt=cutoff).order_by("pk").values_list("pk", flat=True)[:batch])
        if not ids:
            return removed
        removed += ProjectEvent.objects.filter(pk__gte=ids[0], pk__lte=ids[-1], created_at__lt=cutoff).delete()[0]
