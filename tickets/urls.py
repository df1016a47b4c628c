from django.urls import path

from .views import ProjectTicketsViewSet, TicketViewSet

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
]
