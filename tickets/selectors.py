from projects.models import Project, StatusCategory

from .models import Ticket


def open_ticket_count(*, project: Project) -> int:
    return Ticket.objects.active().filter(project=project).exclude(status__category=StatusCategory.DONE).count()
