"""The board: every column with its tickets, the project's tags and members, and velocity.

Its ETag comes from what changes it, not from rendering it: every change to a card is a frame of the
project's event log, numbered by the project's `board_seq`; the rest (the project, the caller's role, the
columns, tags, members and velocity) is read anyway and small. A client polling an unchanged board of
thousands of cards gets a 304 for the cost of the board without its cards.
"""

from collections import defaultdict
from dataclasses import dataclass
from functools import cached_property

from core.api.conditional import etag_of
from projects import selectors as project_selectors
from projects.models import Membership, Status, Tag
from projects.serializers import MemberOutput, TagOutput

from . import selectors
from .serializers import ticket_shapes


@dataclass(frozen=True)
class BoardHead:
    """Everything on the board but its cards."""

    membership: Membership
    statuses: list[Status]
    tags: list[Tag]
    members: list[Membership]
    velocity: int

    @cached_property
    def shape(self) -> dict:
        """Built once per request: the ETag is made of it, and the payload is it with its columns' cards."""
        project = self.membership.project
        return {
            "project": {
                "id": project.id, "name": project.name, "prefix": project.prefix,
                "estimation_mode": project.estimation_mode, "role": self.membership.role,
                "docs_enabled": project.docs_enabled,
            },
            "columns": [{"status": status.slug, "hidden": status.hidden, "tickets": []} for status in self.statuses],
            "tags": TagOutput(self.tags, many=True).data,
            "members": MemberOutput(self.members, many=True).data,
            "velocity": self.velocity,
        }

    @cached_property
    def etag(self) -> str:
        return etag_of(self.membership.project.board_seq, self.shape)


def board_head(*, membership: Membership) -> BoardHead:
    project = membership.project
    return BoardHead(membership=membership, statuses=list(project_selectors.project_statuses(project=project)),
                     tags=list(project_selectors.project_tags(project=project)),
                     members=list(project_selectors.project_members(project=project)),
                     velocity=selectors.velocity(project=project))


def board_payload(head: BoardHead) -> dict:
    """The whole board: its head with each column's cards."""
    rows = selectors.board_tickets(project=head.membership.project, tags=head.tags,
                                   users=[member.user for member in head.members])
    tickets_by_status = defaultdict(list)
    for ticket in ticket_shapes(rows):
        tickets_by_status[ticket["status"]].append(ticket)
    return {**head.shape, "columns": [{**column, "tickets": tickets_by_status[column["status"]]}
                                      for column in head.shape["columns"]]}
