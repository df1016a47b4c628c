"""The names of what happens: live frames (`event`) and history entries (`action`), one enumeration each."""

from enum import StrEnum


class Event(StrEnum):
    """The `event` of a live frame: sent to a project's board viewers, or (notification.*) to one user."""

    TICKET_CREATED = "ticket.created"
    TICKET_UPDATED = "ticket.updated"
    TICKET_MOVED = "ticket.moved"
    TICKET_ARCHIVED = "ticket.archived"
    TICKET_UNARCHIVED = "ticket.unarchived"
    TICKET_DELETED = "ticket.deleted"
    COLUMN_SORTED = "column.sorted"
    NOTIFICATION_CREATED = "notification.created"


class Action(StrEnum):
    """The `action` of a ticket's history entry."""

    CREATED = "created"
    UPDATED = "updated"
    MOVED = "moved"
    ARCHIVED = "archived"
    UNARCHIVED = "unarchived"
    DELETED = "deleted"
    RESTORED = "restored"
    ASSIGNED = "assigned"
    UNASSIGNED = "unassigned"
    SORTED = "sorted"
    COMMENTED = "commented"
    COMMENT_EDITED = "comment_edited"
    COMMENT_DELETED = "comment_deleted"
    CHECKLIST_ITEM_ADDED = "checklist_item_added"
    CHECKLIST_ITEM_TOGGLED = "checklist_item_toggled"
    CHECKLIST_ITEM_UPDATED = "checklist_item_updated"
    CHECKLIST_ITEM_DELETED = "checklist_item_deleted"
    CHECKLIST_SORTED = "checklist_sorted"
    BLOCKER_ADDED = "blocker_added"
    BLOCKER_REMOVED = "blocker_removed"
    ATTACHMENTS_ADDED = "attachments_added"
    ATTACHMENT_DELETED = "attachment_deleted"
    TIME_STARTED = "time_started"
    TIME_STOPPED = "time_stopped"
    TIME_ADDED = "time_added"
    TIME_EDITED = "time_edited"
    TIME_DELETED = "time_deleted"
