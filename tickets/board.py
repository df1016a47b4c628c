"""The board payload: every column with its tickets, the project's tags and members, and velocity."""

from collections import defaultdict

from projects import selectors as project_selectors
from projects.models import Membership
from projects.serializers import MemberOutput, TagOutput

from . import selectors
from .serializers import BoardTicketOutput


def board_payload(*, membership: Membership) -> dict:
    project = membership.project
    tickets_by_status = defaultdict(list)
    for ticket in BoardTicketOutput(selectors.board_tickets(project=project), many=True).data:
        tickets_by_status[ticket["status"]].append(ticket)
    return {
        "project": {
            "id": project.id, "name": project.name, "prefix": project.prefix,
            "estimation_mode": project.estimation_mode, "role": membership.role,
            "docs_enabled": project.docs_enabled,
        },
        "columns": [
            {"status": status.slug, "hidden": status.hidden, "tickets": tickets_by_status[status.slug]}
            for status in project_selectors.project_statuses(project=project)
        ],
        "tags": TagOutput(project_selectors.project_tags(project=project), many=True).data,
        "members": MemberOutput(project_selectors.project_members(project=project), many=True).data,
        "velocity": selectors.velocity(project=project),
    }
