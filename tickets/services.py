from django.db import transaction
from django.db.models import F

from projects.models import Project


def next_ticket_number(*, project: Project) -> int:
    """Hand out the project's next ticket number.

    The UPDATE locks the project row until the surrounding transaction ends, so concurrent
    creations in one project queue here and numbers stay consecutive; the unique
    constraint on (project, number) backs this up.
    """
    assert transaction.get_connection().in_atomic_block, "call inside the creating transaction"
    Project.objects.filter(pk=project.pk).update(last_ticket_number=F("last_ticket_number") + 1)
    return Project.objects.values_list("last_ticket_number", flat=True).get(pk=project.pk)
