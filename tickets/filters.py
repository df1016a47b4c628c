"""The ticket list's query: its filters (django-filter) and its pages (a keyset cursor), checked whole before
any ticket is read, so that a bad value or an unknown parameter is a 422 naming it."""

import base64
import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime

import django_filters
import orjson
from django import forms
from django.db.models import Q, QuerySet
from rest_framework import serializers

from accounts.models import User
from core.errors import RuleViolation
from core.time import TIMESTAMP_FORMAT
from projects.models import Project, Status, Tag

from .models import Priority, Ticket, TicketType

PAGE_MAX = 500


class AssigneeField(forms.CharField):
    """A user id, or `me`."""

    def clean(self, value):
        value = super().clean(value)
        if value in ("", None, "me"):
            return value or None
        if not value.isascii() or not value.isdigit() or len(value) > 18:
            raise forms.ValidationError("must be a user id or me")
        return int(value)


class AssigneeFilter(django_filters.Filter):
    field_class = AssigneeField


class NulIsABadValue:
    """Django words a NUL on its own ("Null characters are not allowed."): here it is a bad value like any
    other, worded as the field words them."""

    nul_message: str

    def validate_no_null_characters(self, value):
        if "\x00" in str(value):
            raise forms.ValidationError(self.nul_message)


class StatusSlugField(NulIsABadValue, django_filters.fields.ModelChoiceField):
    nul_message = "must be a status slug"


class TagIdsField(NulIsABadValue, django_filters.fields.ModelMultipleChoiceField):
    nul_message = "must be tag ids"


class StatusFilter(django_filters.ModelChoiceFilter):
    field_class = StatusSlugField


class TagsFilter(django_filters.ModelMultipleChoiceFilter):
    field_class = TagIdsField


class TimestampField(forms.Field):
    """A `ts` of the interface, `YYYY-MM-DD HH:MM:SS` in UTC, and nothing else (no ISO variants)."""

    def to_python(self, value):
        if value in self.empty_values:
            return None
        try:
            return datetime.strptime(value, TIMESTAMP_FORMAT).replace(tzinfo=UTC)
        except ValueError:
            raise forms.ValidationError("must be YYYY-MM-DD HH:MM:SS (UTC)") from None


class TimestampFilter(django_filters.Filter):
    field_class = TimestampField


class TicketListFilter(django_filters.FilterSet):
    """Every filter of the list; several given: tickets that pass all of them."""

    status = StatusFilter(to_field_name="slug", queryset=Status.objects.none(),
                          error_messages={"invalid_choice": "unknown status %(value)s"})
    assignee = AssigneeFilter(method="assigned_to")
    tag = TagsFilter(
        field_name="tags", queryset=Tag.objects.none(), conjoined=True,
        error_messages={"invalid_choice": "unknown tag %(value)s", "invalid_pk_value": "must be tag ids"})
    priority = django_filters.ChoiceFilter(choices=Priority.choices,
                                           error_messages={"invalid_choice": "unknown priority %(value)s"})
    type = django_filters.ChoiceFilter(choices=TicketType.choices,
                                       error_messages={"invalid_choice": "unknown type %(value)s"})
    updated_after = TimestampFilter(field_name="updated_at", lookup_expr="gt")

    class Meta:
        model = Ticket
        fields = []

    def __init__(self, data, *, project: Project, user: User):
        super().__init__(data, queryset=Ticket.objects.active().filter(project=project))
        self.user = user
        self.filters["status"].queryset = Status.objects.filter(project=project)
        self.filters["tag"].queryset = Tag.objects.filter(project=project)

    def assigned_to(self, tickets: QuerySet[Ticket], name: str, value: int | None) -> QuerySet[Ticket]:
        if value is None:
            return tickets
        return tickets.filter(assignees=self.user.pk if value == "me" else value)


class TicketPageInput(serializers.Serializer):
    limit = serializers.IntegerField(min_value=1, max_value=PAGE_MAX, required=False,
                                     help_text=f"Tickets per page (1 to {PAGE_MAX}): the answer adds `next_cursor`")
    cursor = serializers.CharField(required=False, max_length=500,
                                   help_text="The `next_cursor` of the previous page, with the same filters")


# What the list takes (the base view refuses any other parameter).
PARAMETERS = frozenset(TicketListFilter.base_filters) | frozenset(TicketPageInput().fields)
REPEATABLE = frozenset({"tag"})  # tickets with all of them; any other parameter given twice would keep one value


@dataclass(frozen=True)
class TicketListQuery:
    tickets: QuerySet[Ticket]  # filtered, in list order
    limit: int | None  # None: the whole list
    after: tuple[int, int] | None  # (sort_order, id) of the previous page's last ticket
    fingerprint: str  # of the filters and limit, which a cursor must come with

    @property
    def paged(self) -> bool:
        return self.limit is not None

    def page(self) -> QuerySet[Ticket]:
        tickets = self.tickets.order_by("sort_order", "pk")
        if self.after is not None:
            sort_order, pk = self.after
            tickets = tickets.filter(Q(sort_order__gt=sort_order) | Q(sort_order=sort_order, pk__gt=pk))
        return tickets if self.limit is None else tickets[:self.limit + 1]  # one more: is there a next page?

    def cursor_after(self, last_row: dict) -> str:
        return _encode({"after": [last_row["sort_order"], last_row["id"]], "limit": self.limit,
                        "query": self.fingerprint})


def ticket_list_query(params, *, project: Project, user: User) -> TicketListQuery:
    """The list's query from its query string; a 422 naming the first parameter at fault."""
    repeated = sorted(name for name in set(params) - REPEATABLE if len(params.getlist(name)) > 1)
    if repeated:
        raise RuleViolation(f"{repeated[0]}: given more than once", field=repeated[0])
    filters = TicketListFilter(params, project=project, user=user)
    if not filters.is_valid():
        raise serializers.ValidationError(filters.errors)
    page = TicketPageInput(data=params)
    page.is_valid(raise_exception=True)
    fingerprint = _fingerprint(params)
    limit, after = page.validated_data.get("limit"), None
    if "cursor" in page.validated_data:
        cursor = _decode(page.validated_data["cursor"])
        if cursor["query"] != fingerprint or limit not in (None, cursor["limit"]):
            raise RuleViolation("cursor: belongs to another query (its filters and limit must stay the same)",
                                field="cursor")
        limit, after = cursor["limit"], tuple(cursor["after"])
    return TicketListQuery(tickets=filters.qs, limit=limit, after=after, fingerprint=fingerprint)


def _fingerprint(params) -> str:
    filters = sorted((name, value) for name in params if name not in ("cursor", "limit")
                     for value in params.getlist(name))
    return hashlib.blake2b(orjson.dumps(filters), digest_size=8).hexdigest()


def _encode(cursor: dict) -> str:
    return base64.urlsafe_b64encode(orjson.dumps(cursor)).decode().rstrip("=")


def _decode(text: str) -> dict:
    try:
        cursor = orjson.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
        after, limit, query = cursor["after"], cursor["limit"], cursor["query"]
        valid = (isinstance(query, str) and isinstance(limit, int) and 1 <= limit <= PAGE_MAX
                 and isinstance(after, list) and len(after) == 2
                 and all(isinstance(part, int) and abs(part) < 2**63 for part in after))
    except (ValueError, TypeError, KeyError):
        valid = False
    if not valid:
        raise RuleViolation("cursor: not a cursor this list gave", field="cursor")
    return cursor
