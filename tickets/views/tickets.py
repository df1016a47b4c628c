"""The tickets of a project (list, create, board, stats, archived list, column sort) and one ticket reached
by its number (detail, history, and its writes, each under the ticket's lock: tickets/state.py)."""

from functools import cached_property

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response

from core.api.conditional import ETAG, IF_MATCH, IF_NONE_MATCH, NOT_MODIFIED, not_modified, require_current
from core.api.inputs import validated
from core.api.schema import envelope, error_responses
from core.queries import Read
from core.time import timestamp
from projects import selectors as project_selectors
from projects.permissions import OwnerOr
from projects.roles import Role
from projects.serializers import MemberOutput, TagOutput
from projects.views import ProjectScopedViewSet

from .. import selectors, services
from ..board import board_head, board_payload
from ..filters import PARAMETERS as LIST_PARAMETERS
from ..filters import TicketPageInput, ticket_list_query
from ..models import Priority, TicketType
from ..serializers import (
    ActivityOutput,
    ArchivedFilterInput,
    ArchivedTicketOutput,
    BoardTicketOutput,
    CommentInput,
    CreateTicketInput,
    MoveTicketInput,
    SortColumnInput,
    TicketDetailInput,
    TicketDetailOutput,
    TicketListOutput,
    UnarchivedTicketOutput,
    UpdateTicketInput,
    UserIdInput,
    ticket_detail_shape,
    ticket_shapes,
)
from ..state import TicketState, detail_etag, state_of, state_read

OK = envelope("Ok", ok=True)

BOARD_RESPONSE = inline_serializer("Board", {
    "project": inline_serializer("BoardProject", {
        "id": serializers.IntegerField(), "name": serializers.CharField(), "prefix": serializers.CharField(),
        "estimation_mode": serializers.CharField(), "role": serializers.CharField(),
        "docs_enabled": serializers.BooleanField()}),
    "columns": inline_serializer("BoardColumn", {
        "status": serializers.CharField(), "hidden": serializers.BooleanField(),
        "tickets": BoardTicketOutput(many=True)}, many=True),
    "tags": TagOutput(many=True),
    "members": MemberOutput(many=True),
    "velocity": serializers.IntegerField(),
})


TICKET_FILTER_PARAMETERS = [
    OpenApiParameter("status", str, description="A status slug of the project"),
    OpenApiParameter("assignee", str, description="Tickets assigned to this user id, or `me`"),
    OpenApiParameter("tag", int, many=True, explode=True, description="A tag id; repeated: tickets with all of them"),
    OpenApiParameter("priority", str, enum=Priority.values),
    OpenApiParameter("type", str, enum=TicketType.values),
    OpenApiParameter("updated_after", str, description="`YYYY-MM-DD HH:MM:SS` (UTC): tickets updated later",
                     pattern=r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$"),
]


def page_url(request, cursor: str) -> str:
    """This request's URL with the next page's cursor."""
    params = request.query_params.copy()
    params["cursor"] = cursor
    return request.build_absolute_uri(f"{request.path}?{params.urlencode()}")


class ProjectTicketsViewSet(ProjectScopedViewSet):
    """Project-wide ticket reads and writes: list, create, board, stats, archived list, column sort."""

    required_roles = {"list": Role.VIEWER, "board": Role.VIEWER, "stats": Role.VIEWER,
                      "archived": Role.VIEWER, "create": Role.EDITOR, "sort": Role.CONTRIBUTOR}
    query_parameters = {"list": LIST_PARAMETERS, "archived": ArchivedFilterInput}

    def reads_with_membership(self) -> list[Read]:
        if self.action == "create":  # the column of a ticket created without one
            return [selectors.first_status.call(project=self.kwargs["project_id"])]
        return []

    @extend_schema(
        description="In board order. Filters combine (all must hold); `tag` may repeat. With `limit` (or a `cursor`) "
                    "the answer is one page and adds `next_cursor` (null on the last page) and a `Link: <…>; "
                    "rel=\"next\"` header; without them, the whole list. An unknown parameter or a bad value: 422.",
        parameters=[*TICKET_FILTER_PARAMETERS, TicketPageInput,
                    OpenApiParameter("Link", str, OpenApiParameter.HEADER, response=[200],
                                     description='With pages: `<next page URL>; rel="next"`, none on the last')],
        responses={200: envelope(
            "TicketList", tickets=TicketListOutput(many=True), next_cursor=serializers.CharField(
                allow_null=True, required=False, help_text="With `limit` or `cursor`: the next page's cursor, or null")),
            **error_responses(401, 404, 422)})
    def list(self, request, project_id):
        """List tickets."""
        query = ticket_list_query(request.query_params, project=self.project, user=request.user)
        rows, next_cursor = selectors.ticket_page(project=self.project, query=query)
        if not query.paged:
            return Response({"tickets": ticket_shapes(rows)})
        response = Response({"tickets": ticket_shapes(rows), "next_cursor": next_cursor})
        if next_cursor is not None:
            response["Link"] = f'<{page_url(request, next_cursor)}>; rel="next"'
        return response

    @extend_schema(request=CreateTicketInput,
                   responses={201: envelope("TicketCreated", ticket_ref=serializers.CharField()),
                              **error_responses(401, 403, 404, 422)})
    def create(self, request, project_id):
        """Create a ticket."""
        data = validated(CreateTicketInput, request.data, project=self.project)
        data["status"] = data.get("status") or selectors.first_status.instance(self.rows_read_with_membership[0])
        ticket = services.create_ticket(project=self.project, actor=request.user, **data)
        return Response({"ticket_ref": ticket.prefix_ref}, status=status.HTTP_201_CREATED)

    @extend_schema(parameters=[IF_NONE_MATCH, ETAG],
                   responses={200: BOARD_RESPONSE, **NOT_MODIFIED, **error_responses(401, 404)})
    def board(self, request, project_id):
        """Get the kanban board."""
        head = board_head(membership=self.membership)
        return not_modified(request, head.etag) or Response(board_payload(head), headers={"ETag": head.etag})

    @extend_schema(responses={200: envelope("ProjectStats", open_tickets=serializers.IntegerField()),
                              **error_responses(401, 404)})
    def stats(self, request, project_id):
        """Count open tickets."""
        return Response({"open_tickets": selectors.open_ticket_count(project=self.project)})

    @extend_schema(parameters=[OpenApiParameter("q", str, description="Title filter, at least 2 characters")],
                   responses={200: envelope("ArchivedTicketList", success=True, role=serializers.CharField(),
                                            tickets=ArchivedTicketOutput(many=True)),
                              **error_responses(401, 404)})
    def archived(self, request, project_id):
        """List archived tickets."""
        query = validated(ArchivedFilterInput, request.query_params)["q"].strip()
        tickets = selectors.archived_tickets(project=self.project, title_query=query)
        return Response({"success": True, "role": self.membership.role,
                         "tickets": ArchivedTicketOutput(tickets, many=True).data})

    @extend_schema(request=SortColumnInput, responses={200: OK, **error_responses(401, 403, 404, 422)})
    def sort(self, request, project_id):
        """Reorder a column."""
        data = validated(SortColumnInput, request.data, project=self.project)
        services.sort_column(project=self.project, actor=request.user, **data)
        return Response({"ok": True})


class TicketIdScopedViewSet(ProjectScopedViewSet):
    """Views under /tickets/{ticket_id}/: the ticket, then its project's membership."""

    project_of = "project_id"
    not_found_message = "ticket not found"

    def find_object(self):
        return selectors.live_ticket(ticket_id=self.kwargs["ticket_id"])

    @property
    def ticket(self):
        return self.object


class TicketViewSet(ProjectScopedViewSet):
    """One ticket, reached by its per-project number. Its writes load it as a TicketState: under its lock, with
    the caller's membership, in one round trip."""

    required_roles = {"retrieve": Role.VIEWER, "history": Role.VIEWER, "comment": Role.VIEWER,
                      "update": Role.EDITOR, "move": Role.EDITOR, "archive": Role.EDITOR,
                      "assign": Role.EDITOR, "unassign": Role.EDITOR, "unarchive": Role.MANAGER,
                      "destroy": OwnerOr(Role.MANAGER, owners=lambda state: {state.ticket.created_by_id})}
    query_parameters = {"retrieve": TicketDetailInput}
    locked_actions = frozenset({"update", "move", "archive", "unarchive", "destroy", "assign", "unassign", "comment"})

    def reads_with_membership(self) -> list[Read]:
        project_id, number = self.kwargs["project_id"], self.kwargs["number"]
        if self.locks_object:
            return [state_read(project_id=project_id, number=number)]
        return selectors.ticket_reads(project_id=project_id, number=number, parts=self.action == "retrieve")

    @cached_property
    def scope(self) -> selectors.TicketScope:
        return selectors.ticket_scope(self.rows_read_with_membership, project=self.project)

    def find_object(self):
        if self.locks_object:
            found = state_of(self.rows_read_with_membership[0], project=self.project)
        else:
            found = self.scope.ticket
        if found is None:
            raise Http404("ticket not found")
        return found

    @property
    def ticket(self):
        """The ticket: its TicketState for the writes."""
        return self.object

    @extend_schema(parameters=[TicketDetailInput, IF_NONE_MATCH, ETAG],
                   responses={200: envelope("TicketDetailEnvelope", ticket=TicketDetailOutput()), **NOT_MODIFIED,
                              **error_responses(401, 404, 422)})
    def retrieve(self, request, project_id, number):
        """Get a ticket."""
        rendered = "description" in validated(TicketDetailInput, request.query_params)
        parts = self.scope.parts
        etag = detail_etag(self.ticket.pk, self.ticket.version, parts["blocker_versions"], rendered=rendered)
        return not_modified(request, etag) or Response(
            {"ticket": ticket_detail_shape(self.ticket, parts, description_html=rendered)}, headers={"ETag": etag})

    @extend_schema(parameters=[IF_MATCH, ETAG], request=UpdateTicketInput,
                   responses={200: OK, **error_responses(401, 403, 404, 412, 422)})
    def update(self, request, project_id, number):
        """Update a ticket."""
        changes = validated(UpdateTicketInput, request.data, project=self.project)
        require_current(request, self.ticket.etag)
        state = services.update_ticket(ticket=self.ticket, actor=request.user, **changes)
        return Response({"ok": True}, headers={"ETag": state.etag})

    @extend_schema(description="To the end of the status's column, or right before `before_id` / after `after_id` "
                               "(a ticket of that column): the same status with one of them reorders the column.",
                   parameters=[IF_MATCH, ETAG], request=MoveTicketInput,
                   responses={200: OK, **error_responses(401, 403, 404, 412, 422)})
    def move(self, request, project_id, number):
        """Move a ticket to a status."""
        data = validated(MoveTicketInput, request.data, project=self.project)
        require_current(request, self.ticket.etag)
        state = services.move_ticket(ticket=self.ticket, actor=request.user, **data)
        return Response({"ok": True}, headers={"ETag": state.etag})

    @extend_schema(request=None, responses={200: OK, **error_responses(401, 403, 404, 422)})
    def archive(self, request, project_id, number):
        """Archive a ticket."""
        services.archive_ticket(ticket=self.ticket, actor=request.user)
        return Response({"ok": True})

    @extend_schema(request=None, responses={
        200: envelope("TicketUnarchived", ok=True, ticket=UnarchivedTicketOutput()),
        **error_responses(401, 403, 404)})
    def unarchive(self, request, project_id, number):
        """Unarchive a ticket."""
        state: TicketState = services.unarchive_ticket(ticket=self.ticket, actor=request.user)
        [shape] = ticket_shapes(state.board_rows())
        return Response({"ok": True, "ticket": {**shape, "archived_at": timestamp(state.ticket.archived_at)}})

    @extend_schema(request=None, responses={200: OK, **error_responses(401, 403, 404)})
    def destroy(self, request, project_id, number):
        """Delete a ticket."""
        services.delete_ticket(ticket=self.ticket, actor=request.user)
        return Response({"ok": True})

    @extend_schema(request=UserIdInput, responses={201: OK, **error_responses(401, 403, 404, 422)})
    def assign(self, request, project_id, number):
        """Assign a member to a ticket."""
        user_id = validated(UserIdInput, request.data)["user_id"]
        user = project_selectors.member_user(project=self.project, user_id=user_id)
        services.assign_user(ticket=self.ticket, user=user, actor=request.user)
        return Response({"ok": True}, status=status.HTTP_201_CREATED)

    @extend_schema(request=UserIdInput, responses={200: OK, **error_responses(401, 403, 404, 422)})
    def unassign(self, request, project_id, number):
        """Unassign a member from a ticket."""
        user_id = validated(UserIdInput, request.data)["user_id"]
        services.unassign_user(ticket=self.ticket, user_id=user_id, actor=request.user)
        return Response({"ok": True})

    @extend_schema(responses={200: envelope("TicketHistory", history=ActivityOutput(many=True)),
                              **error_responses(401, 404)})
    def history(self, request, project_id, number):
        """List a ticket's history."""
        return Response({"history": ActivityOutput(selectors.ticket_history(ticket=self.ticket), many=True).data})

    @extend_schema(request=CommentInput, responses={
        201: envelope("CommentCreated", ok=True, reaction_id=serializers.IntegerField()),
        **error_responses(401, 404, 422)})
    def comment(self, request, project_id, number):
        """Comment on a ticket."""
        message = validated(CommentInput, request.data)["comment"]
        comment = services.add_comment(ticket=self.ticket, author=request.user, message=message)
        return Response({"ok": True, "reaction_id": comment.pk}, status=status.HTTP_201_CREATED)
