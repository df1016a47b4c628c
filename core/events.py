"""The names of what happens: live frames (`event`) and history entries (`action`), one enumeration each."""

from enum import StrEnum


class Event(StrEnum):
    """The `event` of a live frame: kept in the project's event log and sent to its board viewers, or
    (notification.*) sent to one user."""

    TICKET_CREATED = "ticket.created"
    TICKET_UPDATED = "ticket.updated"
    TICKET_MOVED = "ticket.moved"
    TICKET_ARCHIVED = "ticket.archived"
    TICKET_UNARCHIVED = "ticket.unarchived"
    TICKET_DELETED = "ticket.deleted"
    COLUMN_SORTED = "column.sorted"
    COMMENT_CREATED = "comment.created"
    COMMENT_UPDATED = "comment.updated"
    COMMENT_DELETED = "comment.deleted"
    CHECKLIST_CHANGED = "checklist.changed"
    BLOCKERS_CHANGED = "blockers.changed"
    ATTACHMENT_ADDED = "attachment.added"
    ATTACHMENT_DELETED = "attachment.deleted"
    TIME_ENTRY_STARTED = "time_entry.started"
    TIME_ENTRY_STOPPED = "time_entry.stopped"
    TIME_ENTRY_CHANGED = "time_entry.changed"
    TIME_ENTRY_DELETED = "time_entry.deleted"
    DOCS_ARTICLE_CREATED = "docs.article.created"
    DOCS_ARTICLE_UPDATED = "docs.article.updated"
    DOCS_ARTICLE_DELETED = "docs.article.deleted"
    DOCS_FOLDER_CHANGED = "docs.folder.changed"
    TAG_CREATED = "tag.created"
    TAG_DELETED = "tag.deleted"
    # The end of an import (transfers): one frame for all it wrote, which sent none of its own.
    PROJECT_IMPORTED = "project.imported"
    # Not an event of the log: the board socket's answer to a viewer it cannot bring up to date.
    RESYNC_REQUIRED = "resync_required"
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
    IMPORTED = "imported"  # written (or found again and updated) by an import, with its source and id there
