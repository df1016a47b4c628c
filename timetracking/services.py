"""Every write to time entries: one transaction per action, recorded in the ticket's history.

The clock is `django.utils.timezone.now`, read once per action. A running timer's current segment
starts at `started_at`; pausing or stopping adds it to `seconds`; stopping rounds the total to the
nearest minute (at least one) and keeps it as whole minutes.
"""

from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import User
from core.errors import RuleViolation
from core.events import Action, Event
from core.rows import UNCHANGED, locked
from tickets import history
from tickets.models import Ticket
from tickets.services import writable_ticket

from . import broadcast, selectors
from .models import TimeEntry, TimerState

# Attempts at taking the running slot when simultaneous starts keep colliding on the unique index.
SLOT_ATTEMPTS = 3


def _snapshot(entry: TimeEntry) -> dict:
    return {"id": entry.pk, "user_id": entry.user_id, "minutes": entry.minutes, "is_running": entry.is_running,
            "note": entry.note}


def _record(entry: TimeEntry, *, actor: User, action: Action, before: dict | None, deleted: bool = False) -> None:
    history.record(ticket=entry.ticket, actor=actor, action=action, changes={
        "time_entry": {"old": before, "new": None if deleted else _snapshot(entry)}})


def _locked(entry: TimeEntry) -> TimeEntry:
    """The entry read again under its row lock, so a double click cannot stop or pause it twice; with the
    ticket and user the caller read (an entry never changes either)."""
    fresh = locked(TimeEntry.objects.all(), entry.pk, "time entry not found")
    fresh.ticket, fresh.user = entry.ticket, entry.user
    return fresh


def _close_segment(entry: TimeEntry, now) -> None:
    if entry.is_running == TimerState.RUNNING:
        entry.seconds += max(0, int((now - entry.started_at).total_seconds()))


def _finish(entry: TimeEntry, *, actor: User, now) -> TimeEntry:
    before = _snapshot(entry)
    _close_segment(entry, now)
    entry.seconds = max(1, (entry.seconds + 30) // 60) * 60  # nearest minute, halves up, at least one
    entry.is_running, entry.stopped_at = TimerState.STOPPED, now
    entry.save(update_fields=["seconds", "is_running", "stopped_at", "updated_at"])
    _record(entry, actor=actor, action=Action.TIME_STOPPED, before=before)
    broadcast.announce_entry(Event.TIME_ENTRY_STOPPED, entry=entry, actor=actor)
    return entry


def _refuse_if_running(user: User, *, now) -> None:
    running = selectors.running_timer(user=user)
    if running is None:
        return
    if running.reachable:
        raise RuleViolation("a timer is already running", running_ticket_id=running.ticket_id)
    # Its ticket was deleted or its owner left the project: a timer nobody can see or stop must not
    # block every later start, so it ends here, with the time it ran.
    _finish(running, actor=user, now=now)


def _take_running_slot(entry: TimeEntry, *, now, update_fields: list[str] | None = None) -> None:
    """Save `entry` as its user's one running timer.

    The check answers the common case; between simultaneous calls the partial unique index decides,
    and the loser's insert fails inside a savepoint, so it can still look up the winner and answer
    the same 422 instead of a 500.
    """
    for attempt in range(SLOT_ATTEMPTS):
        _refuse_if_running(entry.user, now=now)
        try:
            with transaction.atomic():
                entry.save(update_fields=update_fields)
            return
        except IntegrityError:
            if attempt == SLOT_ATTEMPTS - 1:
                raise
            # The winner is committed by now: the check above sees it (or it already stopped: try again).


@transaction.atomic
def start_timer(*, ticket: Ticket, user: User) -> TimeEntry:
    ticket = writable_ticket(ticket)
    now = timezone.now()
    entry = TimeEntry(ticket=ticket, user=user, project_id=ticket.project_id, is_running=TimerState.RUNNING,
                      started_at=now, created_at=now)
    _take_running_slot(entry, now=now)
    _record(entry, actor=user, action=Action.TIME_STARTED, before=None)
    broadcast.announce_entry(Event.TIME_ENTRY_STARTED, entry=entry, actor=user)
    return entry


@transaction.atomic
def pause_timer(*, entry: TimeEntry) -> TimeEntry:
    """Still allowed on an archived ticket: pausing only stops the clock."""
    entry = _locked(entry)
    if entry.is_running != TimerState.RUNNING:
        raise RuleViolation("the timer is not running")
    _close_segment(entry, timezone.now())
    entry.is_running = TimerState.PAUSED
    entry.save(update_fields=["seconds", "is_running", "updated_at"])
    broadcast.announce_entry(Event.TIME_ENTRY_CHANGED, entry=entry, actor=entry.user)
    return entry


@transaction.atomic
def resume_timer(*, entry: TimeEntry) -> TimeEntry:
    """A new segment from now: refused on an archived ticket, like starting."""
    writable_ticket(entry.ticket)
    entry = _locked(entry)
    if entry.is_running != TimerState.PAUSED:
        raise RuleViolation("the timer is not paused")
    now = timezone.now()
    entry.is_running, entry.started_at = TimerState.RUNNING, now
    _take_running_slot(entry, now=now, update_fields=["is_running", "started_at", "updated_at"])
    broadcast.announce_entry(Event.TIME_ENTRY_STARTED, entry=entry, actor=entry.user)
    return entry


@transaction.atomic
def stop_timer(*, entry: TimeEntry, actor: User) -> TimeEntry:
    """Allowed on an archived ticket: a timer that ran when its ticket was archived kept counting."""
    entry = _locked(entry)
    if entry.is_running == TimerState.STOPPED:
        raise RuleViolation("the timer is already stopped")
    return _finish(entry, actor=actor, now=timezone.now())


@transaction.atomic
def add_manual_entry(*, ticket: Ticket, user: User, minutes: int, note: str = "") -> TimeEntry:
    ticket = writable_ticket(ticket)
    entry = TimeEntry.objects.create(ticket=ticket, user=user, project_id=ticket.project_id, seconds=minutes * 60,
                                     note=note, created_at=timezone.now())
    _record(entry, actor=user, action=Action.TIME_ADDED, before=None)
    broadcast.announce_entry(Event.TIME_ENTRY_CHANGED, entry=entry, actor=user)
    return entry


@transaction.atomic
def update_entry(*, entry: TimeEntry, actor: User, minutes: int, note=UNCHANGED) -> TimeEntry:
    writable_ticket(entry.ticket)
    entry = _locked(entry)
    if entry.is_running != TimerState.STOPPED:
        raise RuleViolation("only a stopped entry can be updated: stop the timer first")
    before = _snapshot(entry)
    entry.seconds = minutes * 60
    if note is not UNCHANGED:
        entry.note = note
    if _snapshot(entry) != before:
        entry.save(update_fields=["seconds", "note", "updated_at"])
        _record(entry, actor=actor, action=Action.TIME_EDITED, before=before)
        broadcast.announce_entry(Event.TIME_ENTRY_CHANGED, entry=entry, actor=actor)
    return entry


@transaction.atomic
def delete_entry(*, entry: TimeEntry, actor: User) -> None:
    writable_ticket(entry.ticket)
    entry = _locked(entry)
    before = _snapshot(entry)
    broadcast.announce_entry(Event.TIME_ENTRY_DELETED, entry=entry, actor=actor)  # before: delete() drops its id
    entry.delete()
    _record(entry, actor=actor, action=Action.TIME_DELETED, before=before, deleted=True)
