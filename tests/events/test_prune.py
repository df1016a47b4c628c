"""pruneevents: removes the events past the retention period, in batches, and only those."""

from datetime import timedelta
from io import StringIO

from django.core.management import call_command
from django.utils import timezone

from events.models import ProjectEvent
from events.services import prune_events

from .conftest import write_events


def age(seqs, days: int) -> None:
    ProjectEvent.objects.filter(seq__in=seqs).update(created_at=timezone.now() - timedelta(days=days))


def prune(*args) -> list[str]:
    out = StringIO()
    call_command("pruneevents", *args, stdout=out)
    return out.getvalue().splitlines()


def test_removes_what_is_older_than_the_setting_and_is_idempotent(project, manager, settings):
    settings.EVENT_RETENTION_DAYS = 14
    write_events(project, manager, 6)
    age([1, 2, 3], days=15)
    age([4], days=13)
    assert prune()[-1] == "3"
    assert list(ProjectEvent.objects.order_by("seq").values_list("seq", flat=True)) == [4, 5, 6]
    assert prune()[-1] == "0"
    assert ProjectEvent.objects.count() == 3


def test_the_setting_and_the_option_decide(project, manager, settings):
    write_events(project, manager, 3)
    age([1], days=5)
    age([2], days=3)
    settings.EVENT_RETENTION_DAYS = 4
    assert prune()[-1] == "1"
    assert prune("--days", "2")[-1] == "1"
    assert list(ProjectEvent.objects.values_list("seq", flat=True)) == [3]


def test_deletes_in_batches(project, manager, django_assert_num_queries):
    write_events(project, manager, 7)
    age(range(1, 8), days=30)
    # Three batches of at most 3 (each: read its ids, delete the range), then one read that finds none.
    with django_assert_num_queries(3 * 2 + 1):
        assert prune_events(batch=3) == 7
    assert not ProjectEvent.objects.exists()
