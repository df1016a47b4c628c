"""The board payload: every column with its tickets, the project's tags and members, and velocity."""

from collections import defaultdict

from projects import selectors as project_selectors
from projects.models import Membership
from projects.serializers import MemberOutput, TagOutput

from . import selectors
from .serializers import ticket_shapes


def board_payload(*, membership: Membership) -> dict:
    project = membership.project
    statuses = list(project_selectors.project_statuses(project=project))
    tags = list(project_selectors.project_tags(project=project))
    members = list(project_selectors.project_members(project=project))
    tickets_by_status = defaultdict(list)
    rows = selectors.board_tickets(project=project, tags=tags, users=[member.user for member in members])
    for ticket in ticket_shapes(rows):
        tickets_by_status[ticket["status"]].append(ticket)
    return {
        "project": {
            "id": project.id, "name": project.name, "prefix": project.prefix,
            "estimation_mode": project.estimation_mode, "role": membership.role,
            "docs_enabled": project.docs_enabled,
        },
        "columns": [
            {"status": status.slug, "hidden": status.hidden, "tickets": tickets_by_status[status.slug]}
            for status in statuses
        ],
        "tags": TagOutput(tags, many=True).data,
        "members": MemberOutput(members, many=True).data,
        "velocity": selectors.velocity(project=project),
    }
