"""The activity log of tickets: one entry per write, recorded inside the write's transaction."""

from datetime import date, datetime
from decimal import Decimal

from accounts.models import User
from core.events import Action
from core.time import timestamp
from projects.models import Status

from .models import Activity, Ticket

TRACKED_FIELDS = ["title", "description", "type", "priority", "deadline", "story_points", "estimated_hours",
                  "status", "sort_order", "archived_at", "deleted_at"]


def as_json(value):
    if isinstance(value, datetime):
        return timestamp(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, Status):
        return value.slug
    return value


def snapshot(ticket: Ticket, fields=TRACKED_FIELDS) -> dict:
    return {field: as_json(getattr(ticket, field)) for field in fields}


def changes_between(before: dict, after: dict) -> dict:
    return {field: {"old": before[field], "new": after[field]} for field in after if before.get(field) != after[field]}


def entry(*, ticket: Ticket, actor: User | None, action: Action, changes: dict | None = None) -> Activity:
    """An unsaved entry, for writes that touch many tickets at once (bulk_create them)."""
    return Activity(ticket=ticket, actor=actor, action=action, changes=changes or {})


def record(*, ticket: Ticket, actor: User | None, action: Action, changes: dict | None = None) -> Activity:
    activity = entry(ticket=ticket, actor=actor, action=action, changes=changes)
    activity.save()
    return activity


def ids_change(old_ids, new_ids) -> dict:
    return {"old": sorted(old_ids), "new": sorted(new_ids)}
