from django.urls import path

from .views import MyTimersViewSet, TicketTimeEntriesViewSet, TimeEntryViewSet, TimeReportViewSet

TICKET_ENTRIES = "tickets/<id:ticket_id>/time-entries"
ENTRY = "time-entries/<id:entry_id>"

urlpatterns = [
    path(TICKET_ENTRIES, TicketTimeEntriesViewSet.as_view({"get": "list", "post": "create"}), name="time-entry-list"),
    path(f"{TICKET_ENTRIES}/start", TicketTimeEntriesViewSet.as_view({"post": "start"}), name="timer-start"),
    path(f"{ENTRY}/stop", TimeEntryViewSet.as_view({"post": "stop"}), name="timer-stop"),
    path(f"{ENTRY}/pause", TimeEntryViewSet.as_view({"post": "pause"}), name="timer-pause"),
    path(f"{ENTRY}/resume", TimeEntryViewSet.as_view({"post": "resume"}), name="timer-resume"),
    path(f"{ENTRY}/update", TimeEntryViewSet.as_view({"post": "update"}), name="time-entry-update"),
    path(f"{ENTRY}/delete", TimeEntryViewSet.as_view({"post": "destroy"}), name="time-entry-delete"),
    path("time-entries/running", MyTimersViewSet.as_view({"get": "running"}), name="timer-running"),
    path("time-entries/active", MyTimersViewSet.as_view({"get": "active"}), name="timer-active"),
    path("projects/<id:project_id>/time-report", TimeReportViewSet.as_view({"get": "report"}), name="time-report"),
    path("projects/<id:project_id>/time-report.csv", TimeReportViewSet.as_view({"get": "report_csv"}),
         name="time-report-csv"),
]
