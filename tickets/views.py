from functools import cached_property

from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response

from config.api.inputs import validated
from config.api.schema import envelope, error_responses
from projects import selectors as project_selectors
from projects.permissions import require_owner_or_role
from projects.roles import Role
from projects.serializers import MemberOutput, TagOutput
from projects.views import ProjectScopedViewSet

from . import selectors, services
from .board import board_payload
from .models import Ticket
from .serializers import (
    ActivityOutput,
    ArchivedFilterInput,
    ArchivedTicketOutput,
    BoardTicketOutput,
    CreateTicketInput,
    MoveTicketInput,
    SortColumnInput,
    TicketDetailOutput,
    TicketListFilterInput,
    TicketListOutput,
    UnarchivedTicketOutput,
    UpdateTicketInput,
    UserIdInput,
)

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


class TicketIdScopedViewSet(ProjectScopedViewSet):
    """Views under /tickets/{ticket_id}/: the ticket is found first (404), then the caller's
    membership of its project decides, so a non-member cannot tell a ticket exists."""

    @cached_property
    def ticket(self) -> Ticket:
        return selectors.live_ticket(ticket_id=self.kwargs["ticket_id"])

    def get_project_id(self) -> int:
        return self.ticket.project_id


class ProjectTicketsViewSet(ProjectScopedViewSet):
    """Project-wide ticket reads and writes: list, create, board, stats, archived list, column sort."""

    required_roles = {"list": Role.VIEWER, "board": Role.VIEWER, "stats": Role.VIEWER,
                      "archived": Role.VIEWER, "create": Role.EDITOR, "sort": Role.CONTRIBUTOR}

    @extend_schema(parameters=[OpenApiParameter("status", str, description="A status slug of the project")],
                   responses={200: envelope("TicketList", tickets=TicketListOutput(many=True)),
                              **error_responses(401, 404, 422)})
    def list(self, request, project_id):
        filters = validated(TicketListFilterInput, request.query_params, project=self.project)
        tickets = selectors.ticket_list(project=self.project, status=filters.get("status"))
        return Response({"tickets": TicketListOutput(tickets, many=True).data})

    @extend_schema(request=CreateTicketInput,
                   responses={201: envelope("TicketCreated", ticket_ref=serializers.CharField()),
                              **error_responses(401, 403, 404, 422)})
    def create(self, request, project_id):
        data = validated(CreateTicketInput, request.data, project=self.project)
        ticket = services.create_ticket(project=self.project, actor=request.user, **data)
        return Response({"ticket_ref": ticket.prefix_ref}, status=status.HTTP_201_CREATED)

    @extend_schema(responses={200: BOARD_RESPONSE, **error_responses(401, 404)})
    def board(self, request, project_id):
        return Response(board_payload(membership=self.membership))

    @extend_schema(responses={200: envelope("ProjectStats", open_tickets=serializers.IntegerField()),
                              **error_responses(401, 404)})
    def stats(self, request, project_id):
        return Response({"open_tickets": selectors.open_ticket_count(project=self.project)})

    @extend_schema(parameters=[OpenApiParameter("q", str, description="Title filter, at least 2 characters")],
                   responses={200: envelope("ArchivedTicketList", success=True, role=serializers.CharField(),
                                            tickets=ArchivedTicketOutput(many=True)),
                              **error_responses(401, 404)})
    def archived(self, request, project_id):
        query = validated(ArchivedFilterInput, request.query_params)["q"].strip()
        tickets = selectors.archived_tickets(project=self.project, title_query=query)
        return Response({"success": True, "role": self.membership.role,
                         "tickets": ArchivedTicketOutput(tickets, many=True).data})

    @extend_schema(request=SortColumnInput, responses={200: OK, **error_responses(401, 403, 404, 422)})
    def sort(self, request, project_id):
        data = validated(SortColumnInput, request.data, project=self.project)
        services.sort_column(project=self.project, actor=request.user, **data)
        return Response({"ok": True})


class TicketViewSet(ProjectScopedViewSet):
    """One ticket, reached by its per-project number."""

    required_roles = {"retrieve": Role.VIEWER, "history": Role.VIEWER, "destroy": Role.VIEWER,
                      "update": Role.EDITOR, "move": Role.EDITOR, "archive": Role.EDITOR,
                      "assign": Role.EDITOR, "unassign": Role.EDITOR, "unarchive": Role.MANAGER}

    @cached_property
    def ticket(self) -> Ticket:
        return selectors.ticket_in_project(project=self.project, number=self.kwargs["number"])

    @extend_schema(responses={200: envelope("TicketDetailEnvelope", ticket=TicketDetailOutput()),
                              **error_responses(401, 404)})
    def retrieve(self, request, project_id, number):
        ticket = selectors.ticket_detail(project=self.project, number=number)
        return Response({"ticket": TicketDetailOutput(ticket).data})

    @extend_schema(request=UpdateTicketInput, responses={200: OK, **error_responses(401, 403, 404, 422)})
    def update(self, request, project_id, number):
        ticket = self.ticket  # 404 before the body is judged
        changes = validated(UpdateTicketInput, request.data, project=self.project)
        services.update_ticket(ticket=ticket, actor=request.user, changes=dict(changes))
        return Response({"ok": True})

    @extend_schema(request=MoveTicketInput, responses={200: OK, **error_responses(401, 403, 404, 422)})
    def move(self, request, project_id, number):
        ticket = self.ticket
        data = validated(MoveTicketInput, request.data, project=self.project)
        services.move_ticket(ticket=ticket, status=data["status"], actor=request.user)
        return Response({"ok": True})

    @extend_schema(request=None, responses={200: OK, **error_responses(401, 403, 404, 422)})
    def archive(self, request, project_id, number):
        services.archive_ticket(ticket=self.ticket, actor=request.user)
        return Response({"ok": True})

    @extend_schema(request=None, responses={
        200: envelope("TicketUnarchived", ok=True, ticket=UnarchivedTicketOutput()),
        **error_responses(401, 403, 404)})
    def unarchive(self, request, project_id, number):
        ticket = services.unarchive_ticket(ticket=self.ticket, actor=request.user)
        return Response({"ok": True, "ticket": UnarchivedTicketOutput(selectors.board_ticket(ticket_id=ticket.pk)).data})

    @extend_schema(request=None, responses={200: OK, **error_responses(401, 403, 404)})
    def destroy(self, request, project_id, number):
        require_owner_or_role(membership=self.membership, owner_ids={self.ticket.created_by_id}, role=Role.MANAGER)
        services.delete_ticket(ticket=self.ticket, actor=request.user)
        return Response({"ok": True})

    @extend_schema(request=UserIdInput, responses={201: OK, **error_responses(401, 403, 404, 422)})
    def assign(self, request, project_id, number):
        ticket = self.ticket
        user_id = validated(UserIdInput, request.data)["user_id"]
        user = project_selectors.member_user(project=self.project, user_id=user_id)
        services.assign_user(ticket=ticket, user=user, actor=request.user)
        return Response({"ok": True}, status=status.HTTP_201_CREATED)

    @extend_schema(request=UserIdInput, responses={200: OK, **error_responses(401, 403, 404, 422)})
    def unassign(self, request, project_id, number):
        ticket = self.ticket
        user_id = validated(UserIdInput, request.data)["user_id"]
        services.unassign_user(ticket=ticket, user_id=user_id, actor=request.user)
        return Response({"ok": True})

    @extend_schema(responses={200: envelope("TicketHistory", history=ActivityOutput(many=True)),
                              **error_responses(401, 404)})
    def history(self, request, project_id, number):
        return Response({"history": ActivityOutput(selectors.ticket_history(ticket=self.ticket), many=True).data})
