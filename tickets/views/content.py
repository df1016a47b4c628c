"""A ticket's content: its comments (/reactions/{id}), its checklist and its blockers."""

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from attachments.schema import UPLOAD_REQUEST
from core.api.inputs import validated
from core.api.schema import envelope, error_responses
from projects.permissions import OwnerOr
from projects.roles import Role
from projects.views import ProjectScopedViewSet

from .. import selectors, services
from ..models import ChecklistItem, Comment
from ..serializers import (
    AddBlockerInput,
    BlockerOutput,
    ChecklistItemOutput,
    ChecklistTextInput,
    CommentEditInput,
    SortChecklistInput,
)
from ..state import TicketState, state_by_id
from .attachments import ATTACHMENT_LIST, attached
from .tickets import OK, TicketIdScopedViewSet


class TicketContentViewSet(TicketIdScopedViewSet):
    """Writes under /tickets/{ticket_id}/: the ticket, as a TicketState under its lock in the write's transaction,
    then its project's membership."""

    project_of = "ticket.project_id"

    def find_object(self) -> TicketState:
        self.open_write_transaction()
        state = state_by_id(ticket_id=self.kwargs["ticket_id"])
        if state is None:
            raise Http404("ticket not found")
        return state

    @property
    def ticket(self) -> TicketState:
        """The ticket's state, with the project of the caller's membership."""
        self.object.ticket.project = self.project
        return self.object


class TicketChecklistViewSet(TicketContentViewSet):
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
        return attached(request, ticket=self.object.ticket, comment=self.object)


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


class BlockerViewSet(TicketContentViewSet):
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
        return {"ok": True, "blockers": BlockerOutput(selectors.ticket_blockers(ticket=self.ticket.ticket),
                                                      many=True).data}
