from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api.fields import ObjectIdField, SlugRelatedField
from core.markdown import render_markdown
from core.time import timestamp
from projects.models import EstimationMode, Status, Tag

from .models import Activity, Attachment, Blocker, ChecklistItem, Comment, Priority, Ticket, TicketType
from .search import SEARCH_FIELDS, Match, SearchResult
from .selectors import TicketRows, list_row

# ---- input ------------------------------------------------------------------------------


@extend_schema_field({"type": "string", "minLength": 1, "maxLength": 50, "pattern": r"^[-a-zA-Z0-9_]+$"})
class ProjectStatusField(SlugRelatedField):
    """A status slug of the project in the serializer's context, turned into its Status."""

    default_error_messages = {"does_not_exist": "unknown status {value}", "invalid": "must be a status slug"}

    def __init__(self, **kwargs):
        super().__init__(slug_field="slug", **kwargs)

    def get_queryset(self):
        return Status.objects.filter(project=self.context["project"])


class ProjectTagsField(serializers.ListField):
    """Tag ids of the project in context; answers the Tag objects."""

    child = ObjectIdField()

    def to_internal_value(self, data):
        ids = list(dict.fromkeys(super().to_internal_value(data)))
        if not ids:
            return []
        tags = list(Tag.objects.filter(project=self.context["project"], pk__in=ids))
        missing = set(ids) - {tag.pk for tag in tags}
        if missing:
            raise serializers.ValidationError(f"unknown tag ids for this project: {sorted(missing)}")
        return tags


class TicketFieldsInput(serializers.Serializer):
    """The writable ticket fields shared by create and update; the project comes in the context."""

    title = serializers.CharField(max_length=255)
    description = serializers.CharField(max_length=100_000, allow_blank=True, trim_whitespace=False)
    type = serializers.ChoiceField(choices=TicketType.choices)
    priority = serializers.ChoiceField(choices=Priority.choices, allow_null=True)
    deadline = serializers.DateField(allow_null=True)
    story_points = serializers.IntegerField(min_value=0, max_value=3, allow_null=True)
    estimated_hours = serializers.DecimalField(max_digits=7, decimal_places=2, min_value=0, allow_null=True,
                                               coerce_to_string=False)
    tags = ProjectTagsField()

    def validate_story_points(self, value):
        return self._estimation("story_points", EstimationMode.STORY_POINTS, value, "story points")

    def validate_estimated_hours(self, value):
        return self._estimation("estimated_hours", EstimationMode.HOURS, value, "hours")

    def _estimation(self, field, mode, value, words):
        if value is not None and self.context["project"].estimation_mode != mode:
            raise serializers.ValidationError(f"this project does not use {words} estimation")
        return value


class CreateTicketInput(TicketFieldsInput):
    description = serializers.CharField(max_length=100_000, allow_blank=True, trim_whitespace=False, default="")
    type = serializers.ChoiceField(choices=TicketType.choices, default=TicketType.FEATURE)
    priority = serializers.ChoiceField(choices=Priority.choices, allow_null=True, default=None)
    status = ProjectStatusField(required=False)
    deadline = serializers.DateField(allow_null=True, default=None)
    story_points = serializers.IntegerField(min_value=0, max_value=3, allow_null=True, default=None)
    estimated_hours = serializers.DecimalField(max_digits=7, decimal_places=2, min_value=0, allow_null=True,
                                               coerce_to_string=False, default=None)
    checklist = serializers.ListField(child=serializers.CharField(max_length=500), default=list, max_length=500)
    tags = ProjectTagsField(default=list)


class UpdateTicketInput(TicketFieldsInput):
    """Every field optional: only what is sent changes. `status` is not a field here (move does that)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, partial=True, **kwargs)


class MoveTicketInput(serializers.Serializer):
    """The column, and optionally where in it: right before or right after one of its tickets (a global id)."""

    status = ProjectStatusField()
    before_id = ObjectIdField(required=False, help_text="Land right before this ticket of the target column")
    after_id = ObjectIdField(required=False, help_text="Land right after this ticket of the target column")

    def validate(self, attrs):
        if "before_id" in attrs and "after_id" in attrs:
            raise serializers.ValidationError({"before_id": "give before_id or after_id, not both"})
        return attrs


class UserIdInput(serializers.Serializer):
    user_id = ObjectIdField()


class SortColumnInput(serializers.Serializer):
    status = ProjectStatusField()
    ticket_ids = serializers.ListField(child=ObjectIdField(), allow_empty=True)


class ArchivedFilterInput(serializers.Serializer):
    q = serializers.CharField(required=False, allow_blank=True, default="")


class ProjectStatusesField(serializers.ListField):
    """Status slugs of the project in context; answers their Status objects."""

    child = serializers.CharField()

    def to_internal_value(self, data):
        slugs = set(super().to_internal_value(data))
        statuses = list(Status.objects.filter(project=self.context["project"], slug__in=slugs))
        unknown = slugs - {status.slug for status in statuses}
        if unknown:
            raise serializers.ValidationError(f"unknown status {', '.join(sorted(unknown))}")
        return statuses


class TicketSearchInput(serializers.Serializer):
    q = serializers.CharField(max_length=200)
    archived = serializers.IntegerField(min_value=0, max_value=1, default=0, help_text="1 includes archived tickets")

    def get_fields(self):
        # The interface names its repeated parameters with brackets, which no Python attribute can hold.
        return {
            **super().get_fields(),
            "in[]": serializers.MultipleChoiceField(choices=SEARCH_FIELDS, required=False,
                                                    help_text="Fields to search; all three when absent"),
            "status[]": ProjectStatusesField(default=list, help_text="Status slugs; every status when absent"),
        }

    def validate(self, attrs):
        # A query string has no empty list: no in[] at all reads as an empty one, and means every field.
        return {**attrs, "in[]": attrs.get("in[]") or set(SEARCH_FIELDS)}


class CommentInput(serializers.Serializer):
    comment = serializers.CharField(max_length=20_000)


class CommentEditInput(serializers.Serializer):
    message = serializers.CharField(max_length=20_000)


class ChecklistTextInput(serializers.Serializer):
    text = serializers.CharField(max_length=500)


class SortChecklistInput(serializers.Serializer):
    item_ids = serializers.ListField(child=ObjectIdField(), allow_empty=True)


class ProjectTicketField(ObjectIdField):
    """The id of a live ticket of the project in context, turned into that Ticket."""

    def run_validation(self, data=serializers.empty):
        # After the id checks of ObjectIdField, which compare the number itself.
        ticket_id = super().run_validation(data)
        ticket = (Ticket.objects.live().select_related("project")
                  .filter(project=self.context["project"], pk=ticket_id).first())
        if ticket is None:
            raise serializers.ValidationError("no such ticket in this project")
        return ticket


class AddBlockerInput(serializers.Serializer):
    blocker_ticket_id = ProjectTicketField()


# ---- output -----------------------------------------------------------------------------

class TagRefOutput(serializers.ModelSerializer):
    class Meta:
        model = Tag
        fields = ["id", "name", "color"]


class UserRefOutput(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField(source="display_name")


class AssigneeOutput(UserRefOutput):
    avatar = serializers.CharField(allow_null=True)


# Tickets come in lists and boards by the thousand: their shapes are declared by the serializers below (the
# API reference, which the test client holds every answer to) and built as plain dicts by the functions
# beside them, from rows read by name.

class TicketListOutput(serializers.ModelSerializer):
    """A ticket in lists."""

    project_ticket_number = serializers.IntegerField()
    prefix_ref = serializers.CharField()
    status = serializers.CharField(help_text="The slug of its status")
    priority = serializers.ChoiceField(choices=Priority.choices, allow_null=True)
    tags = TagRefOutput(many=True)

    class Meta:
        model = Ticket
        fields = ["id", "project_ticket_number", "prefix_ref", "title", "status", "type", "priority", "deadline",
                  "tags", "created_at"]


class BoardTicketOutput(TicketListOutput):
    """A ticket on the board, and in the board's live frames."""

    assignees = AssigneeOutput(many=True)
    creator = UserRefOutput()
    reaction_count = serializers.IntegerField()
    checklist_total = serializers.IntegerField()
    checklist_done = serializers.IntegerField()

    class Meta(TicketListOutput.Meta):
        fields = TicketListOutput.Meta.fields + [
            "assignees", "creator", "reaction_count", "checklist_total", "checklist_done"]


class UnarchivedTicketOutput(BoardTicketOutput):
    class Meta(BoardTicketOutput.Meta):
        fields = BoardTicketOutput.Meta.fields + ["archived_at"]


def _ref_fields(row: dict, prefix: str) -> dict:
    """What every ticket shape starts with, from a row of tickets.selectors.LIST_COLUMNS (or a search page)."""
    return {"id": row["id"], "project_ticket_number": row["number"], "prefix_ref": f"{prefix}-{row['number']}",
            "title": row["title"], "status": row["status__slug"], "type": row["type"]}


def _list_shape(row: dict, prefix: str, tags: list[dict]) -> dict:
    deadline = row["deadline"]
    return {**_ref_fields(row, prefix), "priority": row["priority"],
            "deadline": deadline.isoformat() if deadline is not None else None, "tags": tags,
            "created_at": row["created"]}


def ticket_shapes(tickets: TicketRows) -> list[dict]:
    """Each row in the shape TicketListOutput (or, for board rows, BoardTicketOutput) declares: the one builder
    of these shapes, for the list, the board and the board's websocket frames."""
    tags = {pk: {"id": tag.id, "name": tag.name, "color": tag.color} for pk, tag in tickets.tags.items()}
    people = {pk: {"id": pk, "name": user.display_name, "avatar": user.avatar} for pk, user in tickets.users.items()}
    shapes = []
    for row in tickets.rows:
        shape = _list_shape(row, tickets.prefix, [tags[tag_id] for tag_id in tickets.tag_ids.get(row["id"], ())])
        if tickets.board:
            creator = people[row["created_by_id"]]
            shape.update({
                "assignees": [people[user_id] for user_id in tickets.assignee_ids.get(row["id"], ())],
                "creator": {"id": creator["id"], "name": creator["name"]},
                "reaction_count": row["reaction_count"], "checklist_total": row["checklist_total"],
                "checklist_done": row["checklist_done"],
            })
        shapes.append(shape)
    return shapes


class TicketDetailInput(serializers.Serializer):
    description = serializers.ChoiceField(
        choices=["html"], required=False,
        help_text="`html` adds `description_html`, and `message_html` to each comment: the Markdown rendered as the "
                  "docs pages render it, sanitized")


def ticket_detail_shape(ticket: Ticket, parts: dict[str, list[dict]], *, description_html: bool = False) -> dict:
    """The shape TicketDetailOutput declares, from the ticket and the parts of a TicketScope (each part's rows
    already in their shape); with `description_html`, the rendered description and comments besides."""
    shape = {
        **_list_shape(list_row(ticket), ticket.project.prefix, parts["tags"]),
        "description": ticket.description, "story_points": ticket.story_points,
        "estimated_hours": float(ticket.estimated_hours) if ticket.estimated_hours is not None else None,
        "updated_at": timestamp(ticket.updated_at),
        "comments": parts["comments"], "checklist": parts["checklist"], "assignees": parts["assignees"],
        "creator": {"id": ticket.created_by_id, "name": ticket.created_by.display_name},
        "blockers": parts["blockers"], "attachments": parts["attachments"],
        "archived_at": timestamp(ticket.archived_at),
    }
    if description_html:
        shape["description_html"] = render_markdown(ticket.description)
        shape["comments"] = [{**comment, "message_html": render_markdown(comment["message"])}
                             for comment in parts["comments"]]
    return shape


class CommentOutput(serializers.ModelSerializer):
    user_id = serializers.IntegerField(source="author_id")
    user_name = serializers.CharField(source="author.display_name")

    class Meta:
        model = Comment
        fields = ["id", "message", "user_id", "user_name", "created_at"]


class DetailCommentOutput(CommentOutput):
    """A comment as the ticket's detail embeds it."""

    message_html = serializers.CharField(required=False, help_text="With `description=html` only")

    class Meta(CommentOutput.Meta):
        fields = [*CommentOutput.Meta.fields, "message_html"]


class ChecklistEntryOutput(serializers.ModelSerializer):
    """A checklist item as ticket detail embeds it."""

    done = serializers.IntegerField()

    class Meta:
        model = ChecklistItem
        fields = ["id", "text", "done"]


class ChecklistItemOutput(ChecklistEntryOutput):
    class Meta(ChecklistEntryOutput.Meta):
        fields = ["id", "ticket_id", "text", "done", "sort_order"]


class BlockerOutput(serializers.ModelSerializer):
    """The ticket that blocks: a Blocker entry of the interface."""

    id = serializers.IntegerField(source="blocker.id")
    title = serializers.CharField(source="blocker.title")
    status = serializers.CharField(source="blocker.status.slug")
    project_ticket_number = serializers.IntegerField(source="blocker.number")

    class Meta:
        model = Blocker
        fields = ["id", "title", "status", "project_ticket_number"]


class AttachmentOutput(serializers.ModelSerializer):
    class Meta:
        model = Attachment
        fields = ["id", "ticket_id", "original_name", "filesize", "mime_type"]


class TicketDetailOutput(TicketListOutput):
    """A ticket in full."""

    estimated_hours = serializers.FloatField(allow_null=True)
    comments = DetailCommentOutput(many=True)
    checklist = ChecklistEntryOutput(many=True)
    assignees = UserRefOutput(many=True)
    creator = UserRefOutput()
    blockers = BlockerOutput(many=True)
    attachments = AttachmentOutput(many=True)
    description_html = serializers.CharField(required=False, help_text="With `description=html` only")

    class Meta(TicketListOutput.Meta):
        fields = TicketListOutput.Meta.fields + [
            "description", "story_points", "estimated_hours", "updated_at", "comments", "checklist", "assignees",
            "creator", "blockers", "attachments", "archived_at", "description_html"]


class SearchMatchOutput(serializers.Serializer):
    field = serializers.ChoiceField(choices=["title", "description", "comment"])
    text = serializers.CharField(help_text="The text around the hit; … marks where it was cut")
    author = UserRefOutput(required=False, help_text="Comment hits only")


class SearchResultOutput(TicketListOutput):
    """A ticket found by search, with the hits that show why."""

    archived = serializers.BooleanField()
    comment_count = serializers.IntegerField()
    matches = SearchMatchOutput(many=True)

    class Meta(TicketListOutput.Meta):
        fields = ["id", "project_ticket_number", "prefix_ref", "title", "status", "type", "archived", "comment_count",
                  "tags", "matches"]


def search_shapes(result: SearchResult) -> list[dict]:
    """Each ticket of the page in the shape SearchResultOutput declares."""
    return [{
        **_ref_fields(row, result.prefix), "archived": row["archived_at"] is not None,
        "comment_count": row["comment_count"],
        "tags": [{"id": pk, "name": name, "color": color} for pk, name, color in result.tags.get(row["id"], ())],
        "matches": [_match_shape(match) for match in result.matches[row["id"]]],
    } for row in result.rows]


def _match_shape(match: Match) -> dict:
    if match.author is None:
        return {"field": match.field, "text": match.text}
    return {"field": match.field, "text": match.text, "author": match.author._asdict()}


class ArchivedTicketOutput(serializers.ModelSerializer):
    project_ticket_number = serializers.IntegerField(source="number")
    prefix_ref = serializers.CharField()
    status = serializers.CharField(source="status.slug")
    priority = serializers.ChoiceField(choices=Priority.choices, allow_null=True)
    estimated_hours = serializers.FloatField(allow_null=True)
    created_by = serializers.IntegerField(source="created_by_id")

    class Meta:
        model = Ticket
        fields = ["id", "project_id", "project_ticket_number", "prefix_ref", "title", "type", "status", "priority",
                  "deadline", "story_points", "estimated_hours", "sort_order", "archived_at", "created_by"]


class ActivityOutput(serializers.ModelSerializer):
    actor = UserRefOutput(allow_null=True)

    class Meta:
        model = Activity
        fields = ["id", "action", "actor", "changes", "created_at"]
