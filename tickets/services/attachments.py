"""Files on tickets and their comments, through the one stored-file flow of attachments/."""

from django.db import transaction

from accounts.models import User
from attachments import files
from attachments.uploads import Upload
from core.events import Action, Event
from tickets import broadcast, selectors
from tickets.models import Attachment, Comment, Ticket

from ..state import lock_state
from .content import content_changed, writable_comment
from .lifecycle import writable


def _attachment_state(attachment: Attachment) -> dict:
    return {"id": attachment.pk, "name": attachment.original_name}


def attach_files(*, ticket: Ticket, uploads: list[Upload], actor: User,
                 comment: Comment | None = None) -> list[Attachment]:
    """Store checked uploads on the ticket (and on `comment`, one of its comments): all of them or none."""
    attachments = files.records_for(Attachment, uploads, uploaded_by=actor, ticket=ticket, comment=comment)

    def commit() -> list[Attachment]:
        if comment is None:
            state = lock_state(ticket)
            writable(state)
        else:
            state = writable_comment(comment)[0]
        Attachment.objects.bulk_create(attachments)
        content_changed(state, actor, Action.ATTACHMENTS_ADDED,
                        {"attachments": {"old": None, "new": [_attachment_state(a) for a in attachments]}},
                        on_board=False,
                        frames=broadcast.attachment_frames(Event.ATTACHMENT_ADDED, ticket=state.ticket,
                                                           attachments=attachments))
        return attachments

    return files.store_then_commit(attachments, files.uploaded_contents(uploads), commit)


@transaction.atomic
def delete_attachment(*, attachment: Attachment, actor: User) -> None:
    """The record goes now, the stored file once that is committed: a rollback keeps both."""
    state = lock_state(attachment.ticket)
    writable(state)
    attachment = selectors.live_attachment(attachment_id=attachment.pk)  # deleted meanwhile: 404
    before = _attachment_state(attachment)
    # Built before: delete() drops its id.
    frames = broadcast.attachment_frames(Event.ATTACHMENT_DELETED, ticket=state.ticket, attachments=[attachment])
    attachment.delete()
    content_changed(state, actor, Action.ATTACHMENT_DELETED, {"attachments": {"old": [before], "new": None}},
                    on_board=False, frames=frames)
    files.delete_file_on_commit(attachment)
