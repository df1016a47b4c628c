"""Every write to tickets and their content: one function per action, each one transaction that records
its history and builds its board frames (published after commit). By area: the ticket's life cycle,
its content (comments, checklist, blockers), its attachments, and the project's tags."""

from tickets import broadcast, history

from .attachments import attach_files, delete_attachment
from .content import (
    add_blocker,
    add_checklist_item,
    add_comment,
    delete_checklist_item,
    delete_comment,
    edit_comment,
    remove_blocker,
    rename_checklist_item,
    sort_checklist,
    toggle_checklist_item,
)
from .lifecycle import (
    archive_ticket,
    assign_user,
    create_ticket,
    delete_ticket,
    move_ticket,
    restore_ticket,
    sort_column,
    unarchive_ticket,
    unassign_user,
    update_ticket,
)
from .locking import writable_ticket
from .tags import create_tag, delete_tag, tag_edited, update_tag

__all__ = [
    "broadcast", "history", "attach_files", "delete_attachment", "add_blocker", "add_checklist_item", "add_comment",
    "delete_checklist_item", "delete_comment", "edit_comment", "remove_blocker", "rename_checklist_item",
    "sort_checklist", "toggle_checklist_item", "archive_ticket", "assign_user", "create_ticket", "delete_ticket",
    "move_ticket", "restore_ticket", "sort_column",
    "unarchive_ticket", "unassign_user", "update_ticket", "writable_ticket", "create_tag", "delete_tag",
    "tag_edited", "update_tag",
]
