"""The log: every event a project produces is kept once, in its action's transaction, as it was sent."""

from types import SimpleNamespace

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction

from attachments.uploads import Upload
from docs_area import services as docs
from events.models import ProjectEvent
from projects import services as projects
from tests.factories import (
    ArticleFactory,
    AttachmentFactory,
    ChecklistItemFactory,
    CommentFactory,
    FolderFactory,
    TagFactory,
    TicketFactory,
    TimeEntryFactory,
)
from tests.tickets.conftest import BoardListener, status_of
from tickets import services as tickets
from tickets.broadcast import board_group
from timetracking import services as timetracking
from timetracking.models import TimerState
from transfers import runner as transfers
from transfers.models import Job


@pytest.fixture
def world(project, manager):
    ticket = TicketFactory(project=project, title="First")
    return SimpleNamespace(
        project=project, actor=manager, ticket=ticket, other=TicketFactory(project=project, title="Second"),
        comment=CommentFactory(ticket=ticket, author=manager), item=ChecklistItemFactory(ticket=ticket),
        attachment=AttachmentFactory(ticket=ticket, uploaded_by=manager), tag=TagFactory(project=project),
        stopped=TimeEntryFactory(ticket=ticket, user=manager, project_id=project.id),
        folder=FolderFactory(project=project, created_by=manager),
        article=ArticleFactory(project=project, created_by=manager))


def imported(w):
    """An import into the project, run as the background runner runs it."""
    upload = default_storage.save("imports/issues.json", ContentFile(b'[{"number": 1, "title": "Old", "state": "open"}]'))
    job = Job.objects.create(kind="import", source="github", project=w.project, created_by=w.actor, upload=upload)
    transfers.run(job.pk)


def running(w):
    return TimeEntryFactory(ticket=w.ticket, user=w.actor, project_id=w.project.id, is_running=TimerState.RUNNING,
                            started_at=w.ticket.created_at)


ACTIONS = {  # event: the action that produces it (and only it, besides board card refreshes)
    "ticket.created": lambda w: tickets.create_ticket(project=w.project, actor=w.actor, title="New"),
    "ticket.updated": lambda w: tickets.update_ticket(ticket=w.ticket, actor=w.actor, title="Renamed"),
    "ticket.moved": lambda w: tickets.move_ticket(ticket=w.ticket, status=status_of(w.project, "done"), actor=w.actor),
    "ticket.archived": lambda w: tickets.archive_ticket(ticket=w.ticket, actor=w.actor),
    "ticket.deleted": lambda w: tickets.delete_ticket(ticket=w.ticket, actor=w.actor),
    "column.sorted": lambda w: tickets.sort_column(project=w.project, status=w.ticket.status,
                                                   ticket_ids=[w.other.id, w.ticket.id], actor=w.actor),
    "comment.created": lambda w: tickets.add_comment(ticket=w.ticket, author=w.actor, message="Seen"),
    "comment.updated": lambda w: tickets.edit_comment(comment=w.comment, message="Edited", actor=w.actor),
    "comment.deleted": lambda w: tickets.delete_comment(comment=w.comment, actor=w.actor),
    "checklist.changed": lambda w: tickets.toggle_checklist_item(item=w.item, actor=w.actor),
    "blockers.changed": lambda w: tickets.add_blocker(ticket=w.ticket, blocker=w.other, actor=w.actor),
    "attachment.added": lambda w: tickets.attach_files(ticket=w.ticket, actor=w.actor, uploads=[
        Upload(file=SimpleUploadedFile("notes.txt", b"hello"), name="notes.txt", mime_type="text/plain")]),
    "attachment.deleted": lambda w: tickets.delete_attachment(attachment=w.attachment, actor=w.actor),
    "time_entry.started": lambda w: timetracking.start_timer(ticket=w.ticket, user=w.actor),
    "time_entry.stopped": lambda w: timetracking.stop_timer(entry=running(w), actor=w.actor),
    "time_entry.changed": lambda w: timetracking.update_entry(entry=w.stopped, actor=w.actor, minutes=99),
    "time_entry.deleted": lambda w: timetracking.delete_entry(entry=w.stopped, actor=w.actor),
    "docs.article.created": lambda w: docs.create_article(project=w.project, title="Guide", content="…",
                                                          folder_id=None, actor=w.actor),
    "docs.article.updated": lambda w: docs.update_article(article=w.article, actor=w.actor, title="Renamed"),
    "docs.article.deleted": lambda w: docs.delete_article(article=w.article, actor=w.actor),
    "docs.folder.changed": lambda w: docs.update_folder(folder=w.folder, actor=w.actor, title="Renamed"),
    "tag.created": lambda w: tickets.create_tag(project=w.project, name="urgent", color="#FF0000", actor=w.actor),
    "tag.updated": lambda w: tickets.update_tag(tag=w.tag, actor=w.actor, name="renamed"),
    "tag.deleted": lambda w: tickets.delete_tag(tag=w.tag, actor=w.actor),
    "status.created": lambda w: projects.create_status(project=w.project, label="Testing", actor=w.actor),
    "status.updated": lambda w: projects.update_status(status=status_of(w.project, "done"), actor=w.actor,
                                                       label="Shipped"),
    "status.deleted": lambda w: projects.delete_status(status=status_of(w.project, "done"), actor=w.actor),
    "statuses.sorted": lambda w: projects.sort_statuses(
        project=w.project, actor=w.actor, slugs=["todo", "backlog", "in_progress", "review", "done"]),
    "project.imported": imported,
}
CARD_REFRESH = {"ticket.updated"}  # comment and checklist writes also refresh the card's counters
PAYLOAD_KEY = {"comment": "comment", "checklist": "item", "blockers": "blocker_ids", "attachment": "attachment",
               "time_entry": "entry", "docs.article": "article", "docs.folder": "folder", "tag": "tag",
               "status.": "status", "statuses": "slugs"}


def test_every_kind_has_an_action():
    from core.events import Event
    kept = {event.value for event in Event} - {"notification.created", "resync_required", "ticket.unarchived"}
    assert kept == set(ACTIONS)


@pytest.mark.parametrize("event", ACTIONS)
def test_each_action_keeps_its_event_once_as_sent(event, world, django_capture_on_commit_callbacks):
    listener = BoardListener(board_group(world.project.id))
    before = world.project.events.count()
    with django_capture_on_commit_callbacks(execute=True):
        ACTIONS[event](world)
    sent = listener.frames()
    listener.close()

    rows = list(world.project.events.order_by("seq"))[before:]
    assert [row.payload for row in rows] == sent  # every frame sent is kept, exactly, and nothing else
    assert [row.event for row in rows if row.event not in CARD_REFRESH or row.event == event].count(event) == 1
    assert {row.event for row in rows} <= {event} | CARD_REFRESH
    seqs = [row.seq for row in rows]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    world.project.refresh_from_db()
    assert seqs[-1] == world.project.board_seq
    [frame] = [frame for frame in sent if frame["event"] == event]
    assert (frame["project_id"], frame["actor"]) == (world.project.id, {"id": world.actor.id,
                                                                        "name": world.actor.display_name})
    assert all(row.actor == world.actor for row in rows)
    prefix = next((p for p in PAYLOAD_KEY if event.startswith(p)), None)
    if prefix is not None:
        assert PAYLOAD_KEY[prefix] in frame
        if not event.startswith(("docs.", "tag.", "status")):
            assert frame["ticket_id"] == world.ticket.id


@pytest.mark.parametrize("event", ACTIONS)
def test_a_rolled_back_action_keeps_nothing_and_takes_no_seq(event, world, django_capture_on_commit_callbacks):
    class Abort(Exception):
        pass

    listener = BoardListener(board_group(world.project.id))
    seq_before = world.project.board_seq
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(Abort), transaction.atomic():
        ACTIONS[event](world)
        assert ProjectEvent.objects.filter(project=world.project).exists()  # written inside the transaction
        raise Abort
    assert not ProjectEvent.objects.filter(project=world.project).exists()
    world.project.refresh_from_db()
    assert world.project.board_seq == seq_before
    assert listener.frames() == []
    listener.close()


def test_the_next_action_after_a_rollback_continues_without_a_gap(world, django_capture_on_commit_callbacks):
    with pytest.raises(RuntimeError), transaction.atomic():
        ACTIONS["comment.created"](world)
        raise RuntimeError
    ACTIONS["tag.created"](world)
    ACTIONS["ticket.moved"](world)
    assert list(world.project.events.order_by("seq").values_list("seq", flat=True)) == [1, 2]


def test_an_actor_deleted_later_leaves_the_event(world, editor):
    tickets.create_tag(project=world.project, name="urgent", color="#FF0000", actor=editor)
    editor_id = editor.id
    editor.delete()
    event = world.project.events.get()
    assert (event.actor, event.event, event.payload["actor"]["id"]) == (None, "tag.created", editor_id)
