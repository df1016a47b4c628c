from functools import cached_property

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response

from attachments.files import download_response
from attachments.schema import UPLOAD_REQUEST, download_responses
from attachments.uploads import accepted_uploads
from core.api.conditional import (
    ETAG,
    IF_MATCH,
    IF_NONE_MATCH,
    NOT_MODIFIED,
    conditional_write,
    etag_of,
    not_modified,
    with_etag,
)
from core.api.inputs import validated
from core.api.schema import envelope, error_responses
from core.queries import Read
from core.time import timestamp
from projects import selectors as project_selectors
from projects.permissions import OwnerOr
from projects.roles import Role
from projects.serializers import CreateTagInput, MemberOutput, TagOutput, UpdateTagInput
from projects.views import ProjectScopedViewSet

from . import selectors, services
from .board import board_head, board_payload
from .filters import PARAMETERS as LIST_PARAMETERS
from .filters import TicketPageInput, ticket_list_query
from .models import Attachment, ChecklistItem, Comment, Priority, Ticket, TicketType
from .search import SEARCH_LIMIT, TOTAL_CAP, search_tickets
from .serializers import (
    ActivityOutput,
    AddBlockerInput,
    ArchivedFilterInput,
    ArchivedTicketOutput,
    AttachmentOutput,
    BlockerOutput,
    BoardTicketOutput,
    ChecklistItemOutput,
    ChecklistTextInput,
    CommentEditInput,
    CommentInput,
    CreateTicketInput,
    MoveTicketInput,
    SearchResultOutput,
    SortChecklistInput,
    SortColumnInput,
    TicketDetailInput,
    TicketDetailOutput,
    TicketListOutput,
    TicketSearchInput,
    UnarchivedTicketOutput,
    UpdateTicketInput,
    UserIdInput,
    search_shapes,
    ticket_detail_shape,
    ticket_shapes,
)

OK = envelope("Ok", ok=True)

ATTACHMENT_LIST = envelope("AttachmentList", ok=True, attachments=AttachmentOutput(many=True))

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


def detail_etag(ticket: Ticket) -> str:
    """The ETag of the ticket's detail as a GET would answer it now (its shape, read afresh): inside a write's
    transaction, the version that write made."""
    return etag_of(ticket_detail_shape(ticket, selectors.ticket_parts(ticket=ticket)))


def page_url(request, cursor: str) -> str:
    """This request's URL with the next page's cursor."""
    params = request.query_params.copy()
    params["cursor"] = cursor
    return request.build_absolute_uri(f"{request.path}?{params.urlencode()}")


class TicketIdScopedViewSet(ProjectScopedViewSet):
    """Views under /tickets/{ticket_id}/: the ticket, then its project's membership."""

    project_of = "project_id"
    not_found_message = "ticket not found"

    def find_object(self) -> Ticket:
        return selectors.live_ticket(ticket_id=self.kwargs["ticket_id"])

    @property
    def ticket(self) -> Ticket:
        return self.object


class ProjectTicketsViewSet(ProjectScopedViewSet):
    """Project-wide ticket reads and writes: list, create, board, stats, archived list, column sort."""

    required_roles = {"list": Role.VIEWER, "board": Role.VIEWER, "stats": Role.VIEWER,
                      "archived": Role.VIEWER, "create": Role.EDITOR, "sort": Role.CONTRIBUTOR}
    query_parameters = {"list": LIST_PARAMETERS, "archived": ArchivedFilterInput}

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


class TicketViewSet(ProjectScopedViewSet):
    """One ticket, reached by its per-project number."""

    required_roles = {"retrieve": Role.VIEWER, "history": Role.VIEWER, "comment": Role.VIEWER,
                      "update": Role.EDITOR, "move": Role.EDITOR, "archive": Role.EDITOR,
                      "assign": Role.EDITOR, "unassign": Role.EDITOR, "unarchive": Role.MANAGER,
                      "destroy": OwnerOr(Role.MANAGER, owners=lambda ticket: {ticket.created_by_id})}

    def reads_with_membership(self) -> list[Read]:
        return selectors.ticket_reads(project_id=self.kwargs["project_id"], number=self.kwargs["number"],
                                      parts=self.action == "retrieve")

    @cached_property
    def scope(self) -> selectors.TicketScope:
        return selectors.ticket_scope(self.rows_read_with_membership, project=self.project)

    def find_object(self) -> Ticket:
        if self.scope.ticket is None:
            raise Http404("ticket not found")
        return self.scope.ticket

    @property
    def ticket(self) -> Ticket:
        return self.object

    query_parameters = {"retrieve": TicketDetailInput}

    @extend_schema(parameters=[TicketDetailInput, IF_NONE_MATCH, ETAG],
                   responses={200: envelope("TicketDetailEnvelope", ticket=TicketDetailOutput()), **NOT_MODIFIED,
                              **error_responses(401, 404, 422)})
    def retrieve(self, request, project_id, number):
        """Get a ticket."""
        rendered = "description" in validated(TicketDetailInput, request.query_params)
        shape = ticket_detail_shape(self.ticket, self.scope.parts, description_html=rendered)
        return with_etag(request, {"ticket": shape}, etag_of(shape))

    @extend_schema(parameters=[IF_MATCH, ETAG], request=UpdateTicketInput,
                   responses={200: OK, **error_responses(401, 403, 404, 412, 422)})
    def update(self, request, project_id, number):
        """Update a ticket."""
        changes = validated(UpdateTicketInput, request.data, project=self.project)
        _, etag = conditional_write(request, detail_etag, lambda check: services.update_ticket(
            ticket=self.ticket, actor=request.user, precondition=check, **changes))
        return Response({"ok": True}, headers={"ETag": etag})

    @extend_schema(description="To the end of the status's column, or right before `before_id` / after `after_id` "
                               "(a ticket of that column): the same status with one of them reorders the column.",
                   parameters=[IF_MATCH, ETAG], request=MoveTicketInput,
                   responses={200: OK, **error_responses(401, 403, 404, 412, 422)})
    def move(self, request, project_id, number):
        """Move a ticket to a status."""
        data = validated(MoveTicketInput, request.data, project=self.project)
        _, etag = conditional_write(request, detail_etag, lambda check: services.move_ticket(
            ticket=self.ticket, actor=request.user, precondition=check, **data))
        return Response({"ok": True}, headers={"ETag": etag})

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
        ticket = services.unarchive_ticket(ticket=self.ticket, actor=request.user)
        [shape] = ticket_shapes(selectors.board_tickets_by_id(project=self.project, ticket_ids=[ticket.pk]))
        return Response({"ok": True, "ticket": {**shape, "archived_at": timestamp(ticket.archived_at)}})

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


class CommentViewSet(ProjectScopedViewSet):
    """/reactions/{comment_id}/...: the comment, then its ticket's project's membership."""

    project_of = "ticket.project_id"
    not_found_message = "comment not found"
    required_roles = {
        "update": OwnerOr(None, owners=lambda comment: {comment.author_id},
                          message="only its author can edit a comment"),
        "destroy": OwnerOr(Role.MANAGER, owners=lambda comment: {comment.author_id}),
        "attach": OwnerOr(Role.EDITOR, owners=lambda comment: {comment.author_id}),
    }
    upload_actions = frozenset({"attach"})

    def find_object(self) -> Comment:
        return selectors.live_comment(comment_id=self.kwargs["comment_id"])

    @extend_schema(request=CommentEditInput, responses={200: OK, **error_responses(401, 403, 404, 422)})
    def update(self, request, comment_id):
        """Edit a comment."""
        message = validated(CommentEditInput, request.data)["message"]
        services.edit_comment(comment=self.object, message=message, actor=request.user)
        return Response({"ok": True})

    @extend_schema(request=None, responses={200: OK, **error_responses(401, 403, 404, 422)})
    def destroy(self, request, comment_id):
        """Delete a comment."""
        services.delete_comment(comment=self.object, actor=request.user)
        return Response({"ok": True})

    @extend_schema(description="Attach files to the comment (and its ticket): its author, or editor and up.",
                   request=UPLOAD_REQUEST, responses={200: ATTACHMENT_LIST, **error_responses(401, 403, 404, 422)})
    def attach(self, request, comment_id):
        """Attach files to a comment."""
        return _attached(request, ticket=self.object.ticket, comment=self.object)

class TicketChecklistViewSet(TicketIdScopedViewSet):
    """A ticket's checklist: add an item at the end, reorder them all."""

    required_roles = {"create": Role.EDITOR, "sort": Role.EDITOR}

    @extend_schema(request=ChecklistTextInput, responses={
        201: envelope("ChecklistItemCreated", ok=True, item=ChecklistItemOutput()),
        **error_responses(401, 403, 404, 422)})
    def create(self, request, ticket_id):
        """Add a checklist item."""
        text = validated(ChecklistTextInput, request.data)["text"]
        item = services.add_checklist_item(ticket=self.ticket, text=text, actor=request.user)
        return Response({"ok": True, "item": ChecklistItemOutput(item).data}, status=status.HTTP_201_CREATED)

    @extend_schema(request=SortChecklistInput, responses={200: OK, **error_responses(401, 403, 404, 422)})
    def sort(self, request, ticket_id):
        """Reorder a ticket's checklist."""
        item_ids = validated(SortChecklistInput, request.data)["item_ids"]
        services.sort_checklist(ticket=self.ticket, item_ids=item_ids, actor=request.user)
        return Response({"ok": True})


class ChecklistItemViewSet(ProjectScopedViewSet):
    """/checklist/{item_id}/...: the item, then its ticket's project's membership."""

    project_of = "ticket.project_id"
    not_found_message = "checklist item not found"
    required_roles = {"toggle": Role.EDITOR, "update": Role.EDITOR, "destroy": Role.EDITOR}

    def find_object(self) -> ChecklistItem:
        return selectors.checklist_item(item_id=self.kwargs["item_id"])

    @extend_schema(request=None, responses={
        200: envelope("ChecklistItemToggled", ok=True, done=serializers.IntegerField(help_text="0 or 1")),
        **error_responses(401, 403, 404, 422)})
    def toggle(self, request, item_id):
        """Toggle a checklist item done or not done."""
        item = services.toggle_checklist_item(item=self.object, actor=request.user)
        return Response({"ok": True, "done": int(item.done)})

    @extend_schema(request=ChecklistTextInput, responses={200: OK, **error_responses(401, 403, 404, 422)})
    def update(self, request, item_id):
        """Rename a checklist item."""
        text = validated(ChecklistTextInput, request.data)["text"]
        services.rename_checklist_item(item=self.object, text=text, actor=request.user)
        return Response({"ok": True})

    @extend_schema(request=None, responses={200: OK, **error_responses(401, 403, 404, 422)})
    def destroy(self, request, item_id):
        """Delete a checklist item."""
        services.delete_checklist_item(item=self.object, actor=request.user)
        return Response({"ok": True})


BLOCKER_LIST = envelope("BlockerList", ok=True, blockers=BlockerOutput(many=True))


class BlockerViewSet(TicketIdScopedViewSet):
    """The tickets that block a ticket: same project, never itself, never in a cycle. Both answer the new list."""

    required_roles = {"create": Role.EDITOR, "destroy": Role.EDITOR}

    @extend_schema(request=AddBlockerInput, responses={201: BLOCKER_LIST, **error_responses(401, 403, 404, 422)})
    def create(self, request, ticket_id):
        """Add a blocker to a ticket."""
        blocker = validated(AddBlockerInput, request.data, project=self.project)["blocker_ticket_id"]
        services.add_blocker(ticket=self.ticket, blocker=blocker, actor=request.user)
        return Response(self._blockers(), status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={200: BLOCKER_LIST, **error_responses(401, 403, 404, 422)})
    def destroy(self, request, ticket_id, blocker_ticket_id):
        """Remove a blocker from a ticket."""
        services.remove_blocker(ticket=self.ticket, blocker_id=blocker_ticket_id, actor=request.user)
        return Response(self._blockers())

    def _blockers(self) -> dict:
        return {"ok": True, "blockers": BlockerOutput(selectors.ticket_blockers(ticket=self.ticket), many=True).data}


class TagViewSet(ProjectScopedViewSet):
    """A project's tags, for its tickets."""

    required_roles = {"list": Role.VIEWER, "create": Role.MANAGER, "update": Role.MANAGER, "destroy": Role.MANAGER}

    def find_object(self):
        if "tag_id" not in self.kwargs:
            return None  # the project's tag list
        return project_selectors.tag_in_project(project=self.project, tag_id=self.kwargs["tag_id"])

    @extend_schema(responses={200: envelope("TagList", tags=TagOutput(many=True)), **error_responses(401, 404)})
    def list(self, request, project_id):
        """List tags."""
        return Response({"tags": TagOutput(project_selectors.project_tags(project=self.project), many=True).data})

    @extend_schema(request=CreateTagInput,
                   responses={201: envelope("TagCreated", tag=TagOutput()), **error_responses(401, 403, 404, 422)})
    def create(self, request, project_id):
        """Create a tag."""
        data = validated(CreateTagInput, request.data)
        tag = services.create_tag(project=self.project, actor=request.user, **data)
        return Response({"tag": TagOutput(tag).data}, status=status.HTTP_201_CREATED)

    @extend_schema(description="Send only what changes; another tag of the project with the name (whatever its "
                               "case): 422. The board's cards that carry it show it at once.",
                   request=UpdateTagInput,
                   responses={200: envelope("TagUpdated", tag=TagOutput()), **error_responses(401, 403, 404, 422)})
    def update(self, request, project_id, tag_id):
        """Rename or recolour a tag."""
        changes = validated(UpdateTagInput, request.data)
        tag = services.update_tag(tag=self.object, actor=request.user, **changes)
        return Response({"tag": TagOutput(tag).data})

    @extend_schema(request=None, responses={200: envelope("TagDeleted", ok=True), **error_responses(401, 403, 404)})
    def destroy(self, request, project_id, tag_id):
        """Delete a tag."""
        services.delete_tag(tag=self.object, actor=request.user)
        return Response({"ok": True})


class TicketSearchViewSet(ProjectScopedViewSet):
    """Case-insensitive search over the chosen fields; `42` or `APL-42` also finds ticket 42 (listed first),
    then title hits come first, then the others, most recently updated first. Deleted tickets never appear."""

    required_roles = {"search": Role.VIEWER}
    query_parameters = {"search": TicketSearchInput}

    @extend_schema(parameters=[TicketSearchInput], responses={
        200: envelope("TicketSearchResults", tickets=SearchResultOutput(many=True),
                      total=serializers.IntegerField(help_text=(
                          "How many tickets match, beyond the limit too; a lower bound when total_capped")),
                      limit=serializers.IntegerField(help_text=f"At most {SEARCH_LIMIT} tickets are returned"),
                      total_capped=serializers.BooleanField(help_text=(
                          f"Extension. true when more than {TOTAL_CAP} tickets match in one of the searched fields: "
                          "they were not all counted, and total is the number counted (at least that many "
                          "match). The tickets returned are the first ones either way."))),
        **error_responses(401, 404, 422)})
    def search(self, request, project_id):
        """Search tickets."""
        params = validated(TicketSearchInput, request.query_params, project=self.project)
        result = search_tickets(project=self.project, query=params["q"], fields=params["in[]"],
                                statuses=params["status[]"], include_archived=params["archived"] == 1)
        return Response({"tickets": search_shapes(result), "total": result.total,
                         "limit": SEARCH_LIMIT, "total_capped": result.total_capped})


def _attached(request, *, ticket: Ticket, comment: Comment | None = None) -> Response:
    uploads = accepted_uploads(request)
    attachments = services.attach_files(ticket=ticket, comment=comment, uploads=uploads, actor=request.user)
    return Response({"ok": True, "attachments": AttachmentOutput(attachments, many=True).data})


class TicketAttachmentViewSet(TicketIdScopedViewSet):
    upload_actions = frozenset({"create"})
    required_roles = {"create": Role.EDITOR}

    @extend_schema(description="Attach files to the ticket: editor and up.",
                   request=UPLOAD_REQUEST, responses={200: ATTACHMENT_LIST, **error_responses(401, 403, 404, 422)})
    def create(self, request, ticket_id):
        """Attach files to a ticket."""
        return _attached(request, ticket=self.ticket)


class AttachmentViewSet(ProjectScopedViewSet):
    """/attachments/{attachment_id}: the attachment, then its ticket's project's membership."""

    project_of = "ticket.project_id"
    not_found_message = "attachment not found"
    required_roles = {
        "download": Role.VIEWER,
        "destroy": OwnerOr(Role.MANAGER, owners=lambda attachment: {attachment.uploaded_by_id,
                                                                     attachment.ticket.created_by_id}),
    }

    def perform_content_negotiation(self, request, force=False):
        # A download serves any client, whatever its Accept header; an error is still JSON.
        return super().perform_content_negotiation(request, force=True)

    def find_object(self) -> Attachment:
        return selectors.live_attachment(attachment_id=self.kwargs["attachment_id"])

    @extend_schema(
        description="The file as uploaded, for any member. Raster images and PDF come `inline`, every other type "
                    "as a download.",
        responses={**download_responses("The file, with its own media type"), **error_responses(401, 404)})
    def download(self, request, attachment_id):
        """Download an attachment."""
        return download_response(self.object)

    @extend_schema(description="Remove the attachment and its stored file: its uploader, the ticket's creator or "
                               "a manager.", request=None, responses={200: OK, **error_responses(401, 403, 404, 422)})
    def destroy(self, request, attachment_id):
        """Delete an attachment."""
        services.delete_attachment(attachment=self.object, actor=request.user)
        return Response({"ok": True})
