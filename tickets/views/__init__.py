"""The tickets' API views, by area as their services are: the tickets of a project and one ticket, their
content (comments, checklist, blockers), their attachments, the project's tags, search."""

from .attachments import AttachmentViewSet, TicketAttachmentViewSet
from .content import BlockerViewSet, ChecklistItemViewSet, CommentViewSet, TicketChecklistViewSet
from .search import TicketSearchViewSet
from .tags import TagViewSet
from .tickets import ProjectTicketsViewSet, TicketIdScopedViewSet, TicketViewSet

__all__ = ["AttachmentViewSet", "TicketAttachmentViewSet", "BlockerViewSet", "ChecklistItemViewSet", "CommentViewSet",
           "TicketChecklistViewSet", "TicketSearchViewSet", "TagViewSet", "ProjectTicketsViewSet",
           "TicketIdScopedViewSet", "TicketViewSet"]
