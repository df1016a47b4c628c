from datetime import date, timedelta

from django.core.validators import MaxValueValidator, MinValueValidator
from django.utils import timezone
from rest_framework import serializers

from core.api.fields import ObjectIdField

from .models import TimeEntry, TimerState
from .selectors import GROUPINGS

MAX_MINUTES = 1_000_000  # far beyond any real entry, well inside the column
MAX_NOTE = 1000
REPORT_DAYS = 30  # the default range: `to` and the 29 days before it
MAX_REPORT_DAYS = 366
# No time entry is older than the Unix epoch; the day after the last one must still be a date.
FIRST_REPORT_DAY, LAST_REPORT_DAY = date(1970, 1, 1), date.max - timedelta(days=1)

# ---- input ----------------------------------------------------------------------------------


class ManualEntryInput(serializers.Serializer):
    minutes = serializers.IntegerField(min_value=1, max_value=MAX_MINUTES)
    note = serializers.CharField(max_length=MAX_NOTE, required=False, allow_blank=True, default="")


class UpdateEntryInput(ManualEntryInput):
    # Left out: the note stays as it is.
    note = serializers.CharField(max_length=MAX_NOTE, required=False, allow_blank=True)


def report_day(help_text: str) -> serializers.DateField:
    """A day of the report's range: one the range's arithmetic (the day after `to`, the default `from`) can
    reach without leaving the calendar Python and the databases know."""
    return serializers.DateField(
        required=False, validators=[MinValueValidator(FIRST_REPORT_DAY), MaxValueValidator(LAST_REPORT_DAY)],
        help_text=f"{help_text}; from {FIRST_REPORT_DAY} to {LAST_REPORT_DAY}")


class TimeReportInput(serializers.Serializer):
    to = report_day("Last day counted (UTC), YYYY-MM-DD; default today")
    group_by = serializers.ChoiceField(choices=list(GROUPINGS), default="user")
    user_id = ObjectIdField(required=False, help_text="Only this user's entries")
    format = serializers.ChoiceField(choices=["json", "csv"], default="json",
                                     help_text="csv: a download with a header row of the row keys")

    def get_fields(self):
        # `from` is a Python keyword, so it cannot be declared as an attribute.
        return {"from": report_day(f"First day counted (UTC), YYYY-MM-DD; default {REPORT_DAYS - 1} days before "
                                   f"`to` (at the earliest {FIRST_REPORT_DAY})"), **super().get_fields()}

    def validate(self, attrs):
        end = attrs.get("to") or timezone.now().date()
        start = attrs.get("from") or max(end - timedelta(days=REPORT_DAYS - 1), FIRST_REPORT_DAY)
        if start > end:
            raise serializers.ValidationError({"from": "must not be after to"})
        if (end - start).days + 1 > MAX_REPORT_DAYS:
            raise serializers.ValidationError({"from": f"the range covers at most {MAX_REPORT_DAYS} days"})
        return {**attrs, "from": start, "to": end}


class TimeReportCsvInput(TimeReportInput):
    """The report at `.../time-report.csv`, whose path says the format."""

    format = None


# ---- output ---------------------------------------------------------------------------------

class TimeEntryOutput(serializers.ModelSerializer):
    minutes = serializers.IntegerField(help_text="Whole minutes; of a running or paused timer, its finished "
                                                 "segments only")
    is_running = serializers.ChoiceField(choices=TimerState.choices,
                                         help_text="0 stopped or manual, 1 running, 2 paused")

    class Meta:
        model = TimeEntry
        fields = ["id", "ticket_id", "minutes", "is_running", "started_at", "stopped_at", "note"]


class TimeEntryListOutput(TimeEntryOutput):
    """An entry as the ticket's list shows it (also the answer of adding and updating one)."""

    user_name = serializers.CharField(source="user.display_name")
    user_avatar = serializers.CharField(source="user.avatar", allow_null=True)

    class Meta(TimeEntryOutput.Meta):
        fields = ["id", "ticket_id", "user_id", "project_id", "minutes", "is_running", "started_at", "stopped_at",
                  "note", "user_name", "user_avatar"]


class TimerOutput(TimeEntryOutput):
    """An entry with where it runs: the answer of start, stop, pause, resume, running and active."""

    ticket_title = serializers.CharField(source="ticket.title")
    project_name = serializers.CharField(source="ticket.project.name")
    ticket_ref = serializers.CharField(source="ticket.prefix_ref")

    class Meta(TimeEntryOutput.Meta):
        fields = TimeEntryOutput.Meta.fields + ["ticket_title", "project_name", "ticket_ref"]


class UserRowOutput(serializers.Serializer):
    user_id = serializers.IntegerField()
    user_name = serializers.CharField()
    minutes = serializers.IntegerField()


class TicketRowOutput(serializers.Serializer):
    ticket_id = serializers.IntegerField()
    ticket_ref = serializers.CharField()
    title = serializers.CharField()
    minutes = serializers.IntegerField()


class DayRowOutput(serializers.Serializer):
    date = serializers.DateField()
    minutes = serializers.IntegerField()
