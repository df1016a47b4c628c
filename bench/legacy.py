"""The board, ticket detail and search as they were before issue 14: the baselines `make bench` measures
in the same run."""

from collections import defaultdict
from dataclasses import dataclass

from django.db.models import (
    BooleanField,
    Case,
    Count,
    ExpressionWrapper,
    F,
    Prefetch,
    Q,
    When,
    Window,
    prefetch_related_objects,
)
from django.db.models.functions import RowNumber
from rest_framework import serializers
from rest_framework.renderers import JSONRenderer

from accounts.models import User
from projects import selectors as project_selectors
from projects.models import Tag
from projects.serializers import MemberOutput, TagOutput
from tickets import selectors
from tickets.models import Attachment, ChecklistItem, Comment, Ticket
from tickets.search import (
    COMMENT_HITS_PER_TICKET,
    SEARCH_LIMIT,
    TEXT_FIELDS,
    Scope,
    _comment_hits,
    excerpt,
    like_pattern,
    referenced_number,
)
from tickets.serializers import (
    AssigneeOutput,
    BlockerOutput,
    BoardTicketOutput,
    ChecklistEntryOutput,
    CommentOutput,
    SearchResultOutput,
    TagRefOutput,
    TicketDetailOutput,
    UserRefOutput,
)


# The declared shapes, rendered by DRF from ticket objects as before issue 14: what each field read.
class TicketObjectFields(serializers.Serializer):
    project_ticket_number = serializers.IntegerField(source="number")
    status = serializers.CharField(source="status.slug")
    tags = TagRefOutput(many=True, source="tag_list")


class LegacyBoardTicketOutput(TicketObjectFields, BoardTicketOutput):
    assignees = AssigneeOutput(many=True, source="assignee_list")
    creator = UserRefOutput(source="created_by")


class LegacyTicketDetailOutput(TicketObjectFields, TicketDetailOutput):
    comments = CommentOutput(many=True, source="live_comments")
    checklist = ChecklistEntryOutput(many=True, source="checklist_items")
    assignees = UserRefOutput(many=True, source="assignee_list")
    creator = UserRefOutput(source="created_by")
    blockers = BlockerOutput(many=True, source="live_blockers")


class LegacySearchResultOutput(TicketObjectFields, SearchResultOutput):
    archived = serializers.SerializerMethodField()

    def get_archived(self, ticket) -> bool:
        return ticket.archived_at is not None


def ordered_tags() -> Prefetch:
    return Prefetch("tags", queryset=Tag.objects.order_by("sort_order", "id"), to_attr="tag_list")


def board_tickets(tickets):
    """Tickets as ORM objects with every board field, as the board loaded them."""
    return (tickets.prefetch_related("project", "status", "created_by", ordered_tags(),
                                     Prefetch("assignees", queryset=User.objects.order_by("id"),
                                              to_attr="assignee_list"))
            .annotate(reaction_count=selectors.count_of(Comment, deleted_at__isnull=True),
                      checklist_total=selectors.count_of(ChecklistItem),
                      checklist_done=selectors.count_of(ChecklistItem, done=True)))


def ticket_detail(ticket) -> dict:
    """A ticket (with its project, status and creator) in full, rendered by DRF from prefetched objects."""
    prefetch_related_objects(
        [ticket],
        ordered_tags(),
        Prefetch("assignees", queryset=User.objects.order_by("id"), to_attr="assignee_list"),
        Prefetch("checklist_items", queryset=ChecklistItem.objects.order_by("sort_order", "id")),
        Prefetch("comments", to_attr="live_comments", queryset=Comment.objects.filter(
            deleted_at__isnull=True).select_related("author").order_by("created_at", "id")),
        Prefetch("blocked_by_links", to_attr="live_blockers", queryset=selectors.ticket_blockers(ticket=ticket)),
        Prefetch("attachments", queryset=Attachment.objects.filter(comment__deleted_at__isnull=True).order_by("id")),
    )
    return LegacyTicketDetailOutput(ticket).data


def board_payload(*, membership) -> dict:
    project = membership.project
    tickets = LegacyBoardTicketOutput(board_tickets(Ticket.objects.active().filter(project=project))
                                .order_by("sort_order", "id"), many=True).data
    by_status = {}
    for ticket in tickets:
        by_status.setdefault(ticket["status"], []).append(ticket)
    return {
        "project": {"id": project.id, "name": project.name, "prefix": project.prefix,
                    "estimation_mode": project.estimation_mode, "role": membership.role,
                    "docs_enabled": project.docs_enabled},
        "columns": [{"status": status.slug, "hidden": status.hidden, "tickets": by_status.get(status.slug, [])}
                    for status in project_selectors.project_statuses(project=project)],
        "tags": TagOutput(project_selectors.project_tags(project=project), many=True).data,
        "members": MemberOutput(project_selectors.project_members(project=project), many=True).data,
        "velocity": selectors.velocity(project=project),
    }


def ranked_ids(*, project, query, fields, statuses=(), include_archived=False):
    """The matching ids, ranked, with the full count alongside: one pass over every match."""
    tickets = Scope.of(project, statuses, include_archived).tickets()
    number = referenced_number(project=project, query=query)
    ranks = [When(number=number, then=0)] if number is not None else []
    if "title" in fields:
        ranks.append(When(title__icontains=query, then=1))
    lookups = [tickets.filter(**{f"{field}__icontains": query}).values("pk") for field in TEXT_FIELDS
               if field in fields]
    if "comments" in fields:
        lookups.append(_comment_hits(like_pattern(query)).filter(ticket__in=tickets).values("ticket_id"))
    if number is not None:
        lookups.append(tickets.filter(number=number).values("pk"))
    return (Ticket.objects.filter(pk__in=lookups[0].union(*lookups[1:]))
            .annotate(rank=Case(*ranks, default=2), total=Window(Count("pk")))
            .order_by("rank", "-updated_at", "-id").values_list("pk", "total")[:SEARCH_LIMIT])


@dataclass
class SearchResult:
    tickets: list[Ticket]
    total: int
    total_capped: bool


def search_tickets(*, project, query, fields, statuses=(), include_archived=False) -> SearchResult:
    ranked = list(ranked_ids(project=project, query=query, fields=fields, statuses=statuses,
                             include_archived=include_archived))
    hits = {f"{field}_hit": ExpressionWrapper(Q(**{f"{field}__icontains": query}), output_field=BooleanField())
            for field in TEXT_FIELDS if field in fields}
    rows = (Ticket.objects.filter(pk__in=[pk for pk, _ in ranked]).select_related("project", "status")
            .prefetch_related(ordered_tags())
            .annotate(comment_count=selectors.count_of(Comment, deleted_at__isnull=True), **hits))
    by_id = {ticket.pk: ticket for ticket in rows}
    page = [by_id[pk] for pk, _ in ranked]
    _add_matches(page, query, fields)
    return SearchResult(tickets=page, total=ranked[0][1] if ranked else 0, total_capped=False)


def _add_matches(tickets, query, fields) -> None:
    comments = defaultdict(list)
    if "comments" in fields and tickets:
        latest = Window(RowNumber(), partition_by=F("ticket_id"), order_by=[F("created_at").desc(), F("id").desc()])
        for comment in (_comment_hits(like_pattern(query)).filter(ticket__in=tickets).select_related("author")
                        .annotate(position=latest).filter(position__lte=COMMENT_HITS_PER_TICKET)
                        .order_by("-created_at", "-id")):
            comments[comment.ticket_id].append(comment)
    for ticket in tickets:
        ticket.matches = [
            *({"field": field, "text": excerpt(getattr(ticket, field), query)}
              for field in TEXT_FIELDS if field in fields and getattr(ticket, f"{field}_hit")),
            *({"field": "comment", "text": excerpt(comment.message, query), "author": comment.author}
              for comment in comments[ticket.pk]),
        ]


def search_shapes(result: SearchResult) -> list[dict]:
    """The page as DRF rendered it from the tickets through SearchResultOutput's declared fields."""
    return LegacySearchResultOutput(result.tickets, many=True).data


class LegacyRenderer(JSONRenderer):
    """DRF's own renderer, as the API used before orjson."""
