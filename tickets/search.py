"""Ticket search: which tickets of a project match a text, in what order, and excerpts that show why.

Matching is Django's `icontains`: LIKE on SQLite, UPPER(column) LIKE UPPER(pattern) on PostgreSQL,
where the trigram indexes of migration 0002 serve it.
"""

import re
from collections import defaultdict
from collections.abc import Sequence

from django.db.models import BooleanField, Case, Count, ExpressionWrapper, F, Q, QuerySet, When, Window
from django.db.models.functions import RowNumber

from projects.models import Project, Status

from .models import Comment, Ticket
from .selectors import count_of, ordered_tags

SEARCH_FIELDS = ["title", "description", "comments"]
TEXT_FIELDS = ["title", "description"]
SEARCH_LIMIT = 100
COMMENT_HITS_PER_TICKET = 3
EXCERPT_RADIUS = 60
# "42" or "APL-42" also finds ticket number 42; nine digits stay within the number column.
REFERENCE = re.compile(r"(?:(?P<prefix>[A-Za-z0-9]+)-)?(?P<number>[0-9]{1,9})")


def search_tickets(*, project: Project, query: str, fields: set[str], statuses: Sequence[Status] = (),
                   include_archived: bool = False) -> tuple[list[Ticket], int]:
    """The first SEARCH_LIMIT matching tickets, each with its `matches`, and how many match in all.

    Order: the ticket `query` refers to by number, then title hits, then the others; the most recently
    updated first within each group.
    """
    tickets = Ticket.objects.live().filter(project=project)
    if not include_archived:
        tickets = tickets.filter(archived_at__isnull=True)
    if statuses:
        tickets = tickets.filter(status__in=statuses)
    number = referenced_number(project=project, query=query)
    ranks = [When(number=number, then=0)] if number is not None else []
    if "title" in fields:
        ranks.append(When(title__icontains=query, then=1))
    # Ids first, with the full count alongside (one pass over the matches); the wide rows, the
    # per-field hits and the comment counts are then read for the page only.
    ranked = list(
        Ticket.objects.filter(pk__in=_matching_ids(tickets, query, fields, number))
        .annotate(rank=Case(*ranks, default=2), total=Window(Count("pk")))
        .order_by("rank", "-updated_at", "-id").values_list("pk", "total")[:SEARCH_LIMIT]
    )
    hits = {f"{field}_hit": ExpressionWrapper(Q(**{f"{field}__icontains": query}), output_field=BooleanField())
            for field in TEXT_FIELDS if field in fields}
    rows = (Ticket.objects.filter(pk__in=[pk for pk, _ in ranked]).select_related("project", "status")
            .prefetch_related(ordered_tags()).annotate(comment_count=count_of(Comment, deleted_at__isnull=True), **hits))
    by_id = {ticket.pk: ticket for ticket in rows}
    page = [by_id[pk] for pk, _ in ranked]
    _add_matches(page, query, fields)
    return page, ranked[0][1] if ranked else 0


def referenced_number(*, project: Project, query: str) -> int | None:
    reference = REFERENCE.fullmatch(query)
    if reference is None or (reference["prefix"] or project.prefix).upper() != project.prefix:
        return None
    return int(reference["number"])


def _matching_ids(tickets: QuerySet[Ticket], query: str, fields: set[str], number: int | None) -> QuerySet:
    """The ids of `tickets` that match, as a UNION of one lookup per field.

    Each lookup can use its own trigram index; one WHERE with OR across the fields and the
    comments would make PostgreSQL read every ticket of the project instead.
    """
    lookups = [tickets.filter(**{f"{field}__icontains": query}).values("pk") for field in TEXT_FIELDS if field in fields]
    if "comments" in fields:
        lookups.append(_comment_hits(query).filter(ticket__in=tickets).values("ticket_id"))
    if number is not None:
        lookups.append(tickets.filter(number=number).values("pk"))
    return lookups[0].union(*lookups[1:])


def _comment_hits(query: str) -> QuerySet[Comment]:
    return Comment.objects.filter(deleted_at__isnull=True, message__icontains=query)


def _add_matches(tickets: list[Ticket], query: str, fields: set[str]) -> None:
    comments = defaultdict(list)
    if "comments" in fields and tickets:
        # The latest few hits per ticket, in one query whatever the number of tickets and comments.
        latest = Window(RowNumber(), partition_by=F("ticket_id"), order_by=[F("created_at").desc(), F("id").desc()])
        for comment in (_comment_hits(query).filter(ticket__in=tickets).select_related("author")
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


def excerpt(text: str, query: str, radius: int = EXCERPT_RADIUS) -> str:
    """The text around the first hit of `query`, on one line, with … where it was cut.

    The database decided that the text matches; should Python's case folding disagree
    (a rare character), the excerpt starts at the beginning.
    """
    found = re.search(re.escape(query), text, re.IGNORECASE)
    start, end = found.span() if found else (0, 0)
    left, right = max(0, start - radius), min(len(text), end + radius)
    return f"{'…' if left else ''}{' '.join(text[left:right].split())}{'…' if right < len(text) else ''}"
