"""Ticket search: which tickets of a project match a text, in what order, and excerpts that show why.

Matching is Django's `icontains`: LIKE on SQLite, UPPER(column) LIKE UPPER(pattern) on PostgreSQL,
where the trigram indexes of migration 0002 serve it.
"""

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from django.db import connection
from django.db.models import (
    BigIntegerField,
    BooleanField,
    Case,
    DateTimeField,
    Exists,
    ExpressionWrapper,
    F,
    OuterRef,
    Q,
    QuerySet,
    Value,
    When,
    Window,
)
from django.db.models.functions import Cast, RowNumber
from django.db.models.lookups import IContains, PatternLookup

from accounts.models import display_name
from core.lookups import any_of
from core.queries import PreparedRows, Read, rows_together
from projects.models import Project, Status

from .models import Comment, Ticket
from .selectors import count_of

SEARCH_FIELDS = ["title", "description", "comments"]
TEXT_FIELDS = ["title", "description"]
SEARCH_LIMIT = 100
# Matches counted per searched field before the count gives up (`total_capped`).
TOTAL_CAP = 1000
COMMENT_HITS_PER_TICKET = 3
EXCERPT_RADIUS = 60
# "42" or "APL-42" also finds ticket number 42; nine digits stay within the number column.
REFERENCE = re.compile(r"(?:(?P<prefix>[A-Za-z0-9]+)-)?(?P<number>[0-9]{1,9})")


# The columns of a ticket of the page, as SearchResultOutput shows them (serializers.search_shapes).
PAGE_COLUMNS = ("id", "number", "title", "status__slug", "type", "archived_at", "comment_count")


class UserRef(NamedTuple):
    id: int
    name: str


class Match(NamedTuple):
    field: str
    text: str
    author: UserRef | None = None


@dataclass
class SearchResult:
    # PAGE_COLUMNS of each ticket of the page, in order.
    rows: list[dict]
    prefix: str
    # (id, name, color) of each ticket's tags, in the project's tag order.
    tags: dict[int, list[tuple[int, str, str]]]
    matches: dict[int, list[Match]]
    total: int
    # True when more tickets match than were counted: `total` is then a lower bound.
    total_capped: bool


def search_tickets(*, project: Project, query: str, fields: set[str], statuses: Sequence[Status] = (),
                   include_archived: bool = False) -> SearchResult:
    """The first SEARCH_LIMIT matching tickets, each with its matches, and how many match.

    Order: the ticket `query` refers to by number, then title hits, then the others; the most recently
    updated first within each group.

    The count is exact up to TOTAL_CAP matches per searched field. Beyond that (a common word) the
    matches are not all read: `total_capped` says so and `total` is then the number counted, a lower
    bound; the page itself is still exactly the first SEARCH_LIMIT in the order above.
    """
    scope = Scope.of(project, statuses, include_archived)
    number = referenced_number(project=project, query=query)
    probe = _probe(scope, query, fields, number)
    if probe.complete:
        newest_first = sorted(probe.found, key=lambda pk: (probe.found[pk][1], pk), reverse=True)
        ranked = sorted(newest_first, key=lambda pk: probe.found[pk][0])[:SEARCH_LIMIT]
    else:
        ranked = _first_page(scope.tickets(), query, fields, number)
    page, page_columns = _page_read(ranked, query, fields, probe)
    reads = [page, (_tags_of, {"tickets": ranked})]
    if "comments" in fields:
        reads.append(_latest_comment_hits_read(ranked, query, probe))
    page_rows, tag_rows, *comment_rows = _rows_of(reads)
    rows = _page_rows(page_rows, page_columns, ranked, fields, probe)
    comments = _comments_by_ticket(comment_rows[0]) if comment_rows else {}
    return SearchResult(rows=rows, prefix=project.prefix, tags=_tags(tag_rows),
                        matches={row["id"]: _matches(row, comments.get(row["id"], []), query, fields)
                                 for row in rows},
                        total=len(probe.found), total_capped=not probe.complete)


def _rows_of(reads: list[Read | QuerySet]) -> list[list[tuple]]:
    """The rows of each read; the prepared ones (a rare word's are all prepared) in one round trip."""
    together = iter(rows_together(*(read for read in reads if not isinstance(read, QuerySet))))
    return [list(read) if isinstance(read, QuerySet) else next(together) for read in reads]


@dataclass(frozen=True)
class Scope:
    """The tickets a search looks at."""

    project_id: int
    status_ids: Sequence[int] = ()
    include_archived: bool = False

    @classmethod
    def of(cls, project: Project, statuses: Sequence[Status] = (), include_archived: bool = False) -> "Scope":
        return cls(project.pk, tuple(status.pk for status in statuses), include_archived)

    def tickets(self) -> QuerySet[Ticket]:
        tickets = Ticket.objects.live().filter(project_id=self.project_id)
        if not self.include_archived:
            tickets = tickets.filter(archived_at__isnull=True)
        if self.status_ids:
            tickets = tickets.filter(any_of("status_id", self.status_ids))
        return tickets


def referenced_number(*, project: Project, query: str) -> int | None:
    reference = REFERENCE.fullmatch(query)
    if reference is None or (reference["prefix"] or project.prefix).upper() != project.prefix:
        return None
    return int(reference["number"])


# Where a probe row comes from, and the rank of a ticket found there (lower first).
BY_NUMBER, BY_TITLE, BY_DESCRIPTION, BY_COMMENT = range(4)
RANK = {BY_NUMBER: 0, BY_TITLE: 1, BY_DESCRIPTION: 2, BY_COMMENT: 2}
TEXT_SOURCES = {"title": BY_TITLE, "description": BY_DESCRIPTION}


@dataclass
class Probe:
    # {ticket id: (rank, updated_at)} of the matches counted.
    found: dict[int, tuple[int, datetime]]
    # Whether `found` holds every match.
    complete: bool
    # {text field: ids of the tickets it matched}, for the fields whose matches were all read.
    text_hits: dict[str, set[int]]
    # {ticket id: (created_at, id) of each of its comments that match}, when every comment hit was read
    # (else None).
    comment_hits: dict[int, list[tuple[datetime, int]]] | None


def _probe(scope: Scope, query: str, fields: set[str], number: int | None) -> Probe:
    """The matches, read in one query where the database can.

    A UNION ALL of one lookup per field, each served by its own trigram index and each cut at its
    TOTAL_CAP + 1 lowest ids: a common word costs a few thousand rows instead of a full match (one WHERE
    with OR across the fields would make PostgreSQL read every ticket of the project instead), and the
    same data always gives the same count.
    Whatever lookup was read in full also says which tickets of the page it matched: comment rows
    carry the comment's id and time, so the page needs no second search of its texts.
    """
    pattern = like_pattern(query)
    if connection.features.supports_slicing_ordering_in_compound:
        arguments = {"project": scope.project_id, "pattern": pattern}
        if scope.status_ids:
            arguments["statuses"] = list(scope.status_ids)
        if number is not None:
            arguments["number"] = number
        rows = _prepared_probe(scope, fields, number)(**arguments)
    else:  # SQLite: no LIMIT inside a UNION, one query per field
        rows = [row for lookup in _probe_lookups(scope.tickets(), pattern, fields, number) for row in lookup]
    found, by_source, comment_hits = {}, defaultdict(list), defaultdict(list)
    for pk, source, updated, comment_id, comment_created in rows:
        if pk not in found or RANK[source] < found[pk][0]:
            found[pk] = (RANK[source], updated)
        by_source[source].append(pk)
        if comment_id is not None:
            comment_hits[pk].append((comment_created, comment_id))
    in_full = {source for source in (*TEXT_SOURCES.values(), BY_COMMENT) if len(by_source[source]) <= TOTAL_CAP}
    return Probe(found=found, complete=all(len(pks) <= TOTAL_CAP for pks in by_source.values()),
                 text_hits={field: set(by_source[source]) for field, source in TEXT_SOURCES.items()
                            if source in in_full},
                 comment_hits=comment_hits if BY_COMMENT in in_full else None)


_probes: dict[tuple, PreparedRows] = {}


def _prepared_probe(scope: Scope, fields: set[str], number: int | None) -> PreparedRows:
    """The probe's UNION for searches of this kind, compiled once: only the project, the text, the number and
    the statuses differ from one to the next."""
    kind = (tuple(sorted(fields)), bool(scope.status_ids), scope.include_archived, number is not None)
    if kind not in _probes:
        def union(project, pattern, statuses=(), number=None):
            tickets = Scope(project, statuses, scope.include_archived).tickets()
            lookups = _probe_lookups(tickets, pattern, fields, number)
            return lookups[0].union(*lookups[1:], all=True)

        _probes[kind] = PreparedRows(union)
    return _probes[kind]


def _probe_lookups(tickets: QuerySet[Ticket], pattern: str, fields: set[str], number: int | None) -> list[QuerySet]:
    """The probe's lookups: (ticket id, source, updated_at, comment id, comment created_at) rows."""
    no_comment = (Cast(Value(None), BigIntegerField()), Cast(Value(None), DateTimeField()))
    lookups = [tickets.filter(Containing(F(field), pattern)).values_list("pk", Value(source), "updated_at",
                                                                         *no_comment)
               for field, source in TEXT_SOURCES.items() if field in fields]
    if "comments" in fields:
        lookups.append(_comment_hits(pattern).filter(ticket__in=tickets)
                       .values_list("ticket_id", Value(BY_COMMENT), "ticket__updated_at", "pk", "created_at"))
    # Cut by id, not where the scan happens to stop: a capped count is the same for the same data.
    lookups = [lookup.order_by("pk")[:TOTAL_CAP + 1] for lookup in lookups]
    if number is not None:
        lookups.append(tickets.filter(number=number).order_by().values_list("pk", Value(BY_NUMBER), "updated_at",
                                                                            *no_comment))
    return lookups


class Containing(IContains):
    """`icontains` given its LIKE pattern ready-made (`%text%`, escaped), so that a query using it compiles
    the same whatever the text: the SQL, and so the trigram indexes it uses, are icontains' own."""

    def process_rhs(self, compiler, connection):
        return super(PatternLookup, self).process_rhs(compiler, connection)


def _first_page(tickets: QuerySet[Ticket], query: str, fields: set[str], number: int | None) -> list[int]:
    """The ids of the first SEARCH_LIMIT matches when there are too many to read them all.

    The referenced ticket and the title hits (their own index), then the other matches walking the
    tickets from the most recently updated, which for a common word ends after a few hundred rows.
    """
    head_filter = Q(number=number) if number is not None else Q(pk__in=[])
    ranks = [When(number=number, then=RANK[BY_NUMBER])] if number is not None else []
    if "title" in fields:
        head_filter |= Q(title__icontains=query)
        ranks.append(When(title__icontains=query, then=RANK[BY_TITLE]))
    head = list(tickets.filter(head_filter).annotate(rank=Case(*ranks, default=RANK[BY_DESCRIPTION]))
                .order_by("rank", "-updated_at", "-id").values_list("pk", flat=True)[:SEARCH_LIMIT]) if ranks else []
    if len(head) == SEARCH_LIMIT:
        return head
    others = Q(pk__in=[])
    if "description" in fields:
        others |= Q(description__icontains=query)
    if "comments" in fields:
        # The second, always true, condition keeps PostgreSQL from hashing every comment hit of the
        # word up front (390 ms for a common one): it checks the comments of each ticket it walks.
        others |= Exists(_comment_hits(like_pattern(query)).filter(ticket=OuterRef("pk"), ticket_id__gte=OuterRef("pk")))
    rest = tickets.filter(others).exclude(head_filter).order_by("-updated_at", "-id").values_list("pk", flat=True)
    return head + list(rest[:SEARCH_LIMIT - len(head)])


def like_pattern(query: str) -> str:
    """The LIKE pattern of `icontains` for `query`, for Containing."""
    return f"%{connection.ops.prep_for_like_query(query)}%"


def _comment_hits(pattern: str) -> QuerySet[Comment]:
    """The shown comments whose message matches a like_pattern()."""
    return Comment.objects.filter(Containing(F("message"), pattern), deleted_at__isnull=True)


def _page_query(ticket_ids: list[int], columns: tuple[str, ...], hits: dict) -> QuerySet[Ticket]:
    return (Ticket.objects.filter(any_of("pk", ticket_ids))
            .annotate(comment_count=count_of(Comment, deleted_at__isnull=True), **hits).values_list(*columns, *hits))


# The page's query when the probe read every field searched (a rare word): the same from search to search,
# compiled once, with the description (for its excerpt) or without.
_page_of = {columns: PreparedRows(lambda tickets, columns=columns: _page_query(tickets, columns, {}))
            for columns in (PAGE_COLUMNS, (*PAGE_COLUMNS, "description"))}


def _page_read(ranked: list[int], query: str, fields: set[str], probe: Probe) -> tuple[Read | QuerySet, tuple]:
    """The read of PAGE_COLUMNS of the `ranked` tickets, with the texts searched and whether each matched
    where the probe could not tell; with the names of its columns.

    Whether a text matched is the probe's answer where it read that field in full; the database is
    asked again only for a field with too many matches.
    """
    hits = {f"{field}_hit": ExpressionWrapper(Q(**{f"{field}__icontains": query}), output_field=BooleanField())
            for field in TEXT_FIELDS if field in fields and field not in probe.text_hits}
    columns = (*PAGE_COLUMNS, *(["description"] if "description" in fields else []))
    if hits:
        return _page_query(ranked, columns, hits), (*columns, *hits)
    return (_page_of[columns], {"tickets": ranked}), columns


def _page_rows(rows: list[tuple], columns: tuple, ranked: list[int], fields: set[str], probe: Probe) -> list[dict]:
    """The rows of _page_read() as dicts in the `ranked` order, with whether each text searched matched."""
    known = {field: ids for field, ids in probe.text_hits.items() if field in fields}
    by_id = {row[0]: dict(zip(columns, row, strict=True)) for row in rows}
    for row in by_id.values():
        row.update((f"{field}_hit", row["id"] in ids) for field, ids in known.items())
    return [by_id[pk] for pk in ranked]


# The page's tags, and its latest comment hits when the probe found them: compiled once.
_tags_of = PreparedRows(lambda tickets: Ticket.tags.through.objects.filter(any_of("ticket_id", tickets))
                        .order_by("tag__sort_order", "tag_id").values_list("ticket_id", "tag_id", "tag__name",
                                                                           "tag__color"))
_comments_newest_first = PreparedRows(lambda comments: Comment.objects.filter(any_of("pk", comments)).order_by(
    "-created_at", "-id").values_list("ticket_id", "message", "author_id", "author__name", "author__username"))


def _tags(rows: list[tuple]) -> dict[int, list[tuple[int, str, str]]]:
    tags = defaultdict(list)
    for ticket_id, *tag in rows:
        tags[ticket_id].append(tuple(tag))
    return tags


def _latest_comment_hits_read(ticket_ids: list[int], query: str, probe: Probe) -> Read | QuerySet:
    """The read of the latest COMMENT_HITS_PER_TICKET comment hits of each ticket, newest first, with their
    authors."""
    if probe.comment_hits is not None:
        # The probe read every hit with its time: the page's latest are fetched by id, nothing searched again.
        return _comments_newest_first, {"comments": [
            comment_id for pk in ticket_ids
            for _, comment_id in sorted(probe.comment_hits.get(pk, ()), reverse=True)[:COMMENT_HITS_PER_TICKET]]}
    # The latest few hits per ticket, in one query whatever the number of tickets and comments.
    latest = Window(RowNumber(), partition_by=F("ticket_id"), order_by=[F("created_at").desc(), F("id").desc()])
    return (_comment_hits(like_pattern(query)).filter(any_of("ticket_id", ticket_ids)).annotate(position=latest)
            .filter(position__lte=COMMENT_HITS_PER_TICKET).order_by("-created_at", "-id")
            .values_list("ticket_id", "message", "author_id", "author__name", "author__username"))


def _comments_by_ticket(rows: list[tuple]) -> dict[int, list[tuple[str, UserRef]]]:
    by_ticket = defaultdict(list)
    for ticket_id, message, author_id, name, username in rows:
        by_ticket[ticket_id].append((message, UserRef(author_id, display_name(name, username))))
    return by_ticket


def _matches(row: dict, comments: list[tuple[str, UserRef]], query: str, fields: set[str]) -> list[Match]:
    return [
        *(Match(field, excerpt(row[field], query)) for field in TEXT_FIELDS if field in fields and row[f"{field}_hit"]),
        *(Match("comment", excerpt(message, query), author) for message, author in comments),
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
