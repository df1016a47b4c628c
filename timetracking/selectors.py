"""Every read of time entries that feeds a response, and the project time report."""

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from django.db.models import Exists, F, OuterRef, Q, QuerySet, Sum, Value
from django.db.models.functions import Coalesce, Lower, NullIf, TruncDate

from accounts.models import User
from core.rows import found
from projects.models import Membership, Project
from tickets.models import Ticket

from .models import TimeEntry, TimerState


def ticket_entries(*, ticket: Ticket) -> list[TimeEntry]:
    """Every user's entries on the ticket, newest first."""
    return list(TimeEntry.objects.filter(ticket=ticket).select_related("user").order_by("-created_at", "-id"))


def live_entry(*, entry_id: int) -> TimeEntry:
    """An entry of a ticket that is not deleted, with its ticket and project (the timer shape shows them)."""
    return found(TimeEntry.objects.live().select_related("ticket__project", "user").filter(pk=entry_id),
                 "time entry not found")


def _member_of_its_project(user: User) -> Exists:
    return Exists(Membership.objects.filter(user=user, project=OuterRef("project_id")))


def _unfinished_of(user: User) -> QuerySet[TimeEntry]:
    """The user's running and paused timers they can still reach: live ticket, still a member of its project."""
    return (TimeEntry.objects.live().unfinished().filter(user=user).filter(_member_of_its_project(user))
            .select_related("ticket__project").order_by("is_running", "-updated_at", "-id"))


def active_entries(*, user: User) -> list[TimeEntry]:
    """Running first, then paused ones, most recently paused first."""
    return list(_unfinished_of(user))


def running_entry(*, user: User) -> TimeEntry | None:
    """The running timer, else the most recently paused one, else None."""
    return _unfinished_of(user).first()


def running_timer(*, user: User) -> TimeEntry | None:
    """The user's running timer wherever it is, for the services; `reachable` says whether they can still
    see and stop it (its ticket not deleted, they still a member of its project)."""
    entry = (TimeEntry.objects.select_related("ticket").annotate(member=_member_of_its_project(user))
             .filter(user=user, is_running=TimerState.RUNNING).first())
    if entry is not None:
        entry.reachable = entry.member and entry.ticket.deleted_at is None
    return entry


# ---- time report -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Report:
    rows: list[dict]
    total_minutes: int


def _day_range(start: date, end: date) -> tuple[datetime, datetime]:
    return datetime.combine(start, time.min, UTC), datetime.combine(end + timedelta(days=1), time.min, UTC)


def _counted_entries(*, project: Project, start: date, end: date, user_id: int | None) -> QuerySet[TimeEntry]:
    """Stopped entries of live tickets whose day (of stopping, or of creation for manual ones) is in the range."""
    since, until = _day_range(start, end)
    entries = TimeEntry.objects.live().filter(project=project, is_running=TimerState.STOPPED).filter(
        # Ranges on the stored columns rather than a computed day, so the (project, …) indexes serve.
        Q(stopped_at__gte=since, stopped_at__lt=until)
        | Q(stopped_at__isnull=True, created_at__gte=since, created_at__lt=until)
    )
    if user_id is not None:
        entries = entries.filter(user_id=user_id)
    return entries.order_by()


def _grouped(entries: QuerySet, *keys: str) -> QuerySet:
    """One row per group of `keys` with its `seconds` (whole minutes: stopped entries hold whole minutes)."""
    return entries.values(*keys).annotate(seconds=Sum("seconds"))


def _by_user(entries: QuerySet, project: Project, start: date, end: date) -> list[dict]:
    rows = _grouped(entries.annotate(user_name=Coalesce(NullIf("user__name", Value("")), "user__username")),
                    "user_id", "user_name")
    return [{"user_id": row["user_id"], "user_name": row["user_name"], "minutes": row["seconds"] // 60}
            for row in rows.order_by("-seconds", Lower("user_name"), "user_id")]


def _by_ticket(entries: QuerySet, project: Project, start: date, end: date) -> list[dict]:
    rows = _grouped(entries.annotate(number=F("ticket__number"), title=F("ticket__title")),
                    "ticket_id", "number", "title")
    return [{"ticket_id": row["ticket_id"], "ticket_ref": f"{project.prefix}-{row['number']}",
             "title": row["title"], "minutes": row["seconds"] // 60}
            for row in rows.order_by("-seconds", "number")]


def _by_day(entries: QuerySet, project: Project, start: date, end: date) -> list[dict]:
    day = TruncDate(Coalesce("stopped_at", "created_at"), tzinfo=UTC)
    minutes = {row["day"]: row["seconds"] // 60 for row in _grouped(entries.annotate(day=day), "day")}
    days = (start + timedelta(days=offset) for offset in range((end - start).days + 1))
    return [{"date": each.isoformat(), "minutes": minutes.get(each, 0)} for each in days]


GROUPINGS = {"user": _by_user, "ticket": _by_ticket, "day": _by_day}
# The keys of each row, in order: the CSV header.
ROW_KEYS = {"user": ["user_id", "user_name", "minutes"], "ticket": ["ticket_id", "ticket_ref", "title", "minutes"],
            "day": ["date", "minutes"]}


def time_report(*, project: Project, start: date, end: date, group_by: str, user_id: int | None = None) -> Report:
    """Minutes per user, ticket or day, aggregated in the database: one query however many entries."""
    entries = _counted_entries(project=project, start=start, end=end, user_id=user_id)
    rows = GROUPINGS[group_by](entries, project, start, end)
    return Report(rows=rows, total_minutes=sum(row["minutes"] for row in rows))
