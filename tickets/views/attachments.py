"""Files on tickets and on their comments: upload, download, delete."""

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from attachments.files import download_response
from attachments.schema import UPLOAD_REQUEST, download_responses
from attachments.uploads import accepted_uploads
from core.api.schema import envelope, error_responses
from projects.permissions import OwnerOr
from projects.roles import Role
from projects.views import ProjectScopedViewSet

from .. import selectors, services
from ..models import Attachment, Comment, Ticket
from ..serializers import AttachmentOutput
from .tickets import OK, TicketIdScopedViewSet

ATTACHMENT_LIST = envelope("AttachmentList", ok=True, attachments=AttachmentOutput(many=True))


def attached(request, *, ticket: Ticket, comment: Comment | None = None) -> Response:
    """The request's files, checked and stored on the ticket (and on `comment`)."""
    uploads = accepted_uploads(request)
    attachments = services.attach_files(ticket=ticket, comment=comment, uploads=uploads, actor=request.user)
    return Response({"ok": True, "attachments": AttachmentOutput(attachments, many=True).data})


class TicketAttachmentViewSet(TicketIdScopedViewSet):
    """/tickets/{ticket_id}/attachments. The files are stored before the write's transaction, which locks the
    ticket only to record them (attachments/files.py: store_then_commit)."""

    upload_actions = frozenset({"create"})
    required_roles = {"create": Role.EDITOR}

    @extend_schema(description="Attach files to the ticket: editor and up.",
                   request=UPLOAD_REQUEST, responses={200: ATTACHMENT_LIST, **error_responses(401, 403, 404, 422)})
    def create(self, request, ticket_id):
        """Attach files to a ticket."""
        return attached(request, ticket=self.object)


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
