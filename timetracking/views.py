import csv
import io

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, PolymorphicProxySerializer, extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from core.api.base import ApiViewSet
from core.api.inputs import validated
from core.api.schema import envelope, error_responses
from core.spreadsheet import safe_cell
from projects.permissions import OwnerOr
from projects.roles import Role
from projects.views import ProjectScopedViewSet
from tickets.views import TicketIdScopedViewSet

from . import selectors, services
from .models import TimeEntry
from .serializers import (
    DayRowOutput,
    ManualEntryInput,
    TicketRowOutput,
    TimeEntryListOutput,
    TimeReportCsvInput,
    TimeReportInput,
    TimerOutput,
    UpdateEntryInput,
    UserRowOutput,
)

TIMER = envelope("Timer", success=True, entry=TimerOutput())
LISTED_ENTRY = envelope("TimeEntryWritten", success=True, entry=TimeEntryListOutput())
TIMER_CONFLICT = OpenApiResponse(
    envelope("TimerConflict", error=serializers.CharField(), running_ticket_id=serializers.IntegerField(
        required=False, help_text="The ticket of the caller's running timer, when that is what refused it")),
    description="Another timer of the caller runs, the ticket is archived, or the timer is not in a state for this")


def _timer(entry: TimeEntry) -> Response:
    return Response({"success": True, "entry": TimerOutput(entry).data})


class TicketTimeEntriesViewSet(TicketIdScopedViewSet):
    """/tickets/{ticket_id}/time-entries…: any member lists, adds and starts."""

    required_roles = {"list": Role.VIEWER, "create": Role.VIEWER, "start": Role.VIEWER}

    @extend_schema(description="Every user's entries on the ticket, newest first.", responses={
        200: envelope("TimeEntryList", success=True, entries=TimeEntryListOutput(many=True),
                      total_minutes=serializers.IntegerField()),
        **error_responses(401, 404)})
    def list(self, request, ticket_id):
        """List a ticket's time entries."""
        entries = selectors.ticket_entries(ticket=self.ticket)
        return Response({"success": True, "entries": TimeEntryListOutput(entries, many=True).data,
                         "total_minutes": sum(entry.minutes for entry in entries)})

    @extend_schema(description="A manual entry (is_running 0, no timestamps); refused on an archived ticket.",
                   request=ManualEntryInput, responses={200: LISTED_ENTRY, **error_responses(401, 404, 422)})
    def create(self, request, ticket_id):
        """Add a manual time entry."""
        data = validated(ManualEntryInput, request.data)
        entry = services.add_manual_entry(ticket=self.ticket, user=request.user, **data)
        return Response({"success": True, "entry": TimeEntryListOutput(entry).data})

    @extend_schema(description="Start the caller's timer. 422 with `running_ticket_id` while another of the "
                               "caller's timers runs; 422 on an archived ticket.",
                   request=None, responses={200: TIMER, 422: TIMER_CONFLICT, **error_responses(401, 404)})
    def start(self, request, ticket_id):
        """Start a timer on a ticket."""
        return _timer(services.start_timer(ticket=self.ticket, user=request.user))


def _owner(entry: TimeEntry) -> set[int]:
    return {entry.user_id}


OWNER_ONLY = OwnerOr(None, owners=_owner, message="only the owner of a timer can stop, pause or resume it")


class TimeEntryViewSet(ProjectScopedViewSet):
    """/time-entries/{entry_id}/…: the entry (of a ticket not deleted), then its project's membership."""

    project_of = "project_id"
    not_found_message = "time entry not found"
    required_roles = {"stop": OWNER_ONLY, "pause": OWNER_ONLY, "resume": OWNER_ONLY,
                      "update": OwnerOr(Role.MANAGER, owners=_owner), "destroy": OwnerOr(Role.MANAGER, owners=_owner)}

    def find_object(self) -> TimeEntry:
        return selectors.live_entry(entry_id=self.kwargs["entry_id"])

    @extend_schema(description="Stop a running or paused timer: the total is rounded to the nearest minute, at "
                               "least 1. Its owner only.",
                   request=None, responses={200: TIMER, **error_responses(401, 403, 404, 422)})
    def stop(self, request, entry_id):
        """Stop a timer."""
        return _timer(services.stop_timer(entry=self.object, actor=request.user))

    @extend_schema(description="Pause a running timer, keeping its time. Its owner only.",
                   request=None, responses={200: TIMER, **error_responses(401, 403, 404, 422)})
    def pause(self, request, entry_id):
        """Pause a timer."""
        return _timer(services.pause_timer(entry=self.object))

    @extend_schema(description="Resume a paused timer with a new segment. 422 with `running_ticket_id` while "
                               "another timer of the caller runs. Its owner only.",
                   request=None, responses={200: TIMER, 422: TIMER_CONFLICT, **error_responses(401, 403, 404)})
    def resume(self, request, entry_id):
        """Resume a paused timer."""
        return _timer(services.resume_timer(entry=self.object))

    @extend_schema(description="Replace the minutes (and the note, if given) of a stopped entry: its owner or a "
                               "project manager.",
                   request=UpdateEntryInput, responses={200: LISTED_ENTRY, **error_responses(401, 403, 404, 422)})
    def update(self, request, entry_id):
        """Change a stopped entry's minutes."""
        data = validated(UpdateEntryInput, request.data)
        entry = services.update_entry(entry=self.object, actor=request.user, **data)
        return Response({"success": True, "entry": TimeEntryListOutput(entry).data})

    @extend_schema(description="Delete the entry: its owner or a project manager.",
                   request=None, responses={200: envelope("TimeEntryDeleted", success=True),
                                            **error_responses(401, 403, 404, 422)})
    def destroy(self, request, entry_id):
        """Delete a time entry."""
        services.delete_entry(entry=self.object, actor=request.user)
        return Response({"success": True})


class MyTimersViewSet(ApiViewSet):
    """The caller's own timers, across their projects."""

    permission_classes = [IsAuthenticated]

    @extend_schema(description="The caller's running timer, else the most recently paused one, else null.",
                   responses={200: envelope("RunningTimer", success=True, entry=TimerOutput(allow_null=True)),
                              **error_responses(401)})
    def running(self, request):
        """Get your running timer."""
        entry = selectors.running_entry(user=request.user)
        return Response({"success": True, "entry": TimerOutput(entry).data if entry is not None else None})

    @extend_schema(description="All the caller's running and paused timers: running first, then the most recently "
                               "paused.",
                   responses={200: envelope("ActiveTimers", success=True, entries=TimerOutput(many=True)),
                              **error_responses(401)})
    def active(self, request):
        """List your running and paused timers."""
        return Response({"success": True,
                         "entries": TimerOutput(selectors.active_entries(user=request.user), many=True).data})


REPORT_ROWS = PolymorphicProxySerializer("TimeReportRow", serializers=[UserRowOutput, TicketRowOutput, DayRowOutput],
                                         resource_type_field_name=None, many=True)


class TimeReportViewSet(ProjectScopedViewSet):
    required_roles = {"report": Role.VIEWER, "report_csv": Role.VIEWER}
    query_parameters = {"report": TimeReportInput, "report_csv": TimeReportCsvInput}

    def perform_content_negotiation(self, request, force=False):
        # `format` is this route's own parameter (json or csv), not DRF's renderer override, which would
        # answer 404 for a format it has no renderer for; errors stay JSON.
        return super().perform_content_negotiation(request, force=True)

    @extend_schema(
        description="Minutes of stopped entries of live tickets whose day (UTC date of stopping, or of creation for "
                    "manual entries) lies in [from, to], grouped by user or ticket (most minutes first) or day "
                    "(every day of the range). Any member. `format=csv` answers the CSV of `.../time-report.csv`, "
                    "the operation a generated client should use for it.",
        parameters=[TimeReportInput],
        responses={
            (200, "application/json"): envelope(
                "TimeReport", success=True, **{"from": serializers.DateField()}, to=serializers.DateField(),
                group_by=serializers.CharField(), rows=REPORT_ROWS, total_minutes=serializers.IntegerField()),
            (200, "text/csv"): OpenApiTypes.STR,
            **error_responses(401, 404, 422)})
    def report(self, request, project_id):
        """Get the project's time report."""
        params = validated(TimeReportInput, request.query_params)
        if params["format"] == "csv":
            return self._csv_report(params)
        report = self._report(params)
        return Response({"success": True, "from": params["from"].isoformat(), "to": params["to"].isoformat(),
                         "group_by": params["group_by"], "rows": report.rows, "total_minutes": report.total_minutes})

    @extend_schema(
        description="The time report as a CSV download (the parameters of the JSON report but `format`): a header "
                    "row of the row keys, then one line per row. Any member.",
        parameters=[TimeReportCsvInput],
        responses={(200, "text/csv"): OpenApiTypes.STR, **error_responses(401, 404, 422)})
    def report_csv(self, request, project_id):
        """Get the project's time report as CSV."""
        return self._csv_report(validated(TimeReportCsvInput, request.query_params))

    def _report(self, params: dict) -> selectors.Report:
        return selectors.time_report(project=self.project, start=params["from"], end=params["to"],
                                     group_by=params["group_by"], user_id=params.get("user_id"))

    def _csv_report(self, params: dict) -> HttpResponse:
        start, end, group_by = params["from"], params["to"], params["group_by"]
        return _csv_download(self._report(params).rows, keys=selectors.ROW_KEYS[group_by],
                             filename=f"{self.project.prefix}-time-{start}-{end}.csv")


def _csv_download(rows: list[dict], *, keys: list[str], filename: str) -> HttpResponse:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(keys)
    writer.writerows([safe_cell(row[key]) for key in keys] for row in rows)
    response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
