from django.urls import path

from .views import (
    AttachmentViewSet,
    BlockerViewSet,
    ChecklistItemViewSet,
    CommentViewSet,
    ProjectTicketsViewSet,
    TicketAttachmentViewSet,
    TicketChecklistViewSet,
    TicketSearchViewSet,
    TicketViewSet,
)

PROJECT = "projects/<id:project_id>"
TICKET = f"{PROJECT}/tickets/<id:number>"

urlpatterns = [
    path(f"{PROJECT}/stats", ProjectTicketsViewSet.as_view({"get": "stats"}), name="project-stats"),
    path(f"{PROJECT}/board", ProjectTicketsViewSet.as_view({"get": "board"}), name="project-board"),
    path(f"{PROJECT}/tickets", ProjectTicketsViewSet.as_view({"get": "list", "post": "create"}), name="ticket-list"),
    path(f"{PROJECT}/tickets/sort", ProjectTicketsViewSet.as_view({"post": "sort"}), name="ticket-sort"),
    path(f"{PROJECT}/archived-tickets", ProjectTicketsViewSet.as_view({"get": "archived"}), name="ticket-archived"),
    path(TICKET, TicketViewSet.as_view({"get": "retrieve"}), name="ticket-detail"),
    path(f"{TICKET}/update", TicketViewSet.as_view({"post": "update"}), name="ticket-update"),
    path(f"{TICKET}/move", TicketViewSet.as_view({"post": "move"}), name="ticket-move"),
    path(f"{TICKET}/archive", TicketViewSet.as_view({"post": "archive"}), name="ticket-archive"),
    path(f"{TICKET}/unarchive", TicketViewSet.as_view({"post": "unarchive"}), name="ticket-unarchive"),
    path(f"{TICKET}/delete", TicketViewSet.as_view({"post": "destroy"}), name="ticket-delete"),
    path(f"{TICKET}/assign", TicketViewSet.as_view({"post": "assign"}), name="ticket-assign"),
    path(f"{TICKET}/unassign", TicketViewSet.as_view({"post": "unassign"}), name="ticket-unassign"),
    path(f"{TICKET}/history", TicketViewSet.as_view({"get": "history"}), name="ticket-history"),
    path(f"{PROJECT}/tickets/search", TicketSearchViewSet.as_view({"get": "search"}), name="ticket-search"),
    path(f"{TICKET}/comments", TicketViewSet.as_view({"post": "comment"}), name="ticket-comment"),
    path("reactions/<id:comment_id>/update", CommentViewSet.as_view({"post": "update"}), name="comment-update"),
    path("reactions/<id:comment_id>/delete", CommentViewSet.as_view({"post": "destroy"}), name="comment-delete"),
    path("tickets/<id:ticket_id>/checklist", TicketChecklistViewSet.as_view({"post": "create"}), name="checklist-add"),
    path("tickets/<id:ticket_id>/checklist/sort", TicketChecklistViewSet.as_view({"post": "sort"}),
         name="checklist-sort"),
    path("checklist/<id:item_id>/toggle", ChecklistItemViewSet.as_view({"post": "toggle"}), name="checklist-toggle"),
    path("checklist/<id:item_id>/update", ChecklistItemViewSet.as_view({"post": "update"}), name="checklist-update"),
    path("checklist/<id:item_id>/delete", ChecklistItemViewSet.as_view({"post": "destroy"}), name="checklist-delete"),
    path("tickets/<id:ticket_id>/blockers", BlockerViewSet.as_view({"post": "create"}), name="blocker-add"),
    path("tickets/<id:ticket_id>/blockers/<id:blocker_ticket_id>/delete", BlockerViewSet.as_view({"post": "destroy"}),
         name="blocker-delete"),
    path("tickets/<id:ticket_id>/attachments", TicketAttachmentViewSet.as_view({"post": "create"}),
         name="ticket-attachments"),
    path("reactions/<id:comment_id>/attachments", CommentViewSet.as_view({"post": "attach"}),
         name="comment-attachments"),
    path("attachments/<id:attachment_id>", AttachmentViewSet.as_view({"get": "download"}), name="attachment-download"),
    path("attachments/<id:attachment_id>/delete", AttachmentViewSet.as_view({"post": "destroy"}),
         name="attachment-delete"),
]
