"""Every write to tickets: one function per action, each one transaction with its history and broadcast."""

from collections import defaultdict
from datetime import date
from decimal import Decimal

from django.db import transaction
from django.db.models import F, Max
from django.utils import timezone

from accounts.models import User
from config.api.exceptions import RuleViolation
from projects.models import Project, Status, StatusCategory, Tag

from . import broadcast, history, selectors
from .models import Activity, Attachment, Blocker, ChecklistItem, Comment, Ticket, TicketType
from .uploads import Upload


def next_ticket_number(*, project: Project) -> int:
    """Hand out the project's next ticket number.

    The UPDATE locks the project row until the surrounding transaction ends, so concurrent
    creations in one project queue here and numbers stay consecutive; the unique
    constraint on (project, number) backs this up.
    """
    assert transaction.get_connection().in_atomic_block, "call inside the creating transaction"
    Project.objects.filter(pk=project.pk).update(last_ticket_number=F("last_ticket_number") + 1)
    return Project.objects.values_list("last_ticket_number", flat=True).get(pk=project.pk)


def next_sort_order(*, project_id: int, status: Status) -> int:
    """The end of a column."""
    last = Ticket.objects.active().filter(project_id=project_id, status=status).aggregate(last=Max("sort_order"))
    return 0 if last["last"] is None else last["last"] + 1


def first_status(project: Project) -> Status:
    return project.statuses.order_by("sort_order", "id").first()


def _locked(ticket: Ticket) -> Ticket:
    """The ticket re-read under a row lock, so concurrent writes to it queue instead of overwriting."""
    # of=("self",): lock the ticket row only, not its project and status rows joined alongside.
    return Ticket.objects.select_for_update(of=("self",)).select_related("project", "status").get(pk=ticket.pk)


def _writable(ticket: Ticket) -> Ticket:
    ticket = _locked(ticket)
    if ticket.archived_at is not None:
        raise RuleViolation("ticket is archived: unarchive it first")
    return ticket


def _entering(ticket: Ticket, status: Status) -> dict:
    """The field values that put the ticket at the end of `status`, with `done_at` (velocity) in step."""
    was_done = ticket.status_id is not None and ticket.status.category == StatusCategory.DONE
    is_done = status.category == StatusCategory.DONE
    return {
        "status": status,
        "sort_order": next_sort_order(project_id=ticket.project_id, status=status),
        "done_at": (ticket.done_at if was_done else timezone.now()) if is_done else None,
    }


def _apply(ticket: Ticket, actor: User, action: str, event: str, values: dict, **frame) -> Ticket:
    """Write `values` to the locked ticket, record what changed and announce it to the board."""
    before = history.snapshot(ticket, values)
    for field, value in values.items():
        setattr(ticket, field, value)
    ticket.save(update_fields=[*values, "updated_at"])
    history.record(ticket=ticket, actor=actor, action=action,
                   changes=history.changes_between(before, history.snapshot(ticket, values)))
    broadcast.ticket_event(event, ticket=ticket, actor=actor, **frame)
    return ticket


@transaction.atomic
def create_ticket(
    *, project: Project, actor: User, title: str, description: str = "", type: str = TicketType.FEATURE,
    priority: str | None = None, status: Status | None = None, deadline: date | None = None,
    story_points: int | None = None, estimated_hours: Decimal | None = None,
    checklist: list[str] = (), tags: list[Tag] = (),
) -> Ticket:
    ticket = Ticket(
        project=project, number=next_ticket_number(project=project), title=title, description=description,
        type=type, priority=priority, deadline=deadline, story_points=story_points,
        estimated_hours=estimated_hours, created_by=actor,
    )
    for field, value in _entering(ticket, status or first_status(project)).items():
        setattr(ticket, field, value)
    ticket.save()
    ticket.tags.set(tags)
    ChecklistItem.objects.bulk_create(
        ChecklistItem(ticket=ticket, text=text, sort_order=index) for index, text in enumerate(checklist)
    )
    changes = {field: {"old": None, "new": value} for field, value in history.snapshot(ticket).items()
               if value not in (None, "")}
    if tags:
        changes["tags"] = history.ids_change([], [tag.pk for tag in tags])
    if checklist:
        changes["checklist"] = {"old": [], "new": list(checklist)}
    history.record(ticket=ticket, actor=actor, action="created", changes=changes)
    broadcast.ticket_event("ticket.created", ticket=ticket, actor=actor)
    return ticket


@transaction.atomic
def update_ticket(*, ticket: Ticket, actor: User, changes: dict) -> Ticket:
    """Apply the sent fields only; `tags` replaces the ticket's tags."""
    ticket = _writable(ticket)
    tags = changes.pop("tags", None)
    before = history.snapshot(ticket, changes.keys())
    for field, value in changes.items():
        setattr(ticket, field, value)
    diff = history.changes_between(before, history.snapshot(ticket, changes.keys()))
    if tags is not None:
        old_ids = set(ticket.tags.values_list("pk", flat=True))
        new_ids = {tag.pk for tag in tags}
        if old_ids != new_ids:
            ticket.tags.set(tags)
            diff["tags"] = history.ids_change(old_ids, new_ids)
    if not diff:
        return ticket
    ticket.save()
    history.record(ticket=ticket, actor=actor, action="updated", changes=diff)
    broadcast.ticket_event("ticket.updated", ticket=ticket, actor=actor)
    return ticket


@transaction.atomic
def move_ticket(*, ticket: Ticket, status: Status, actor: User) -> Ticket:
    ticket = _writable(ticket)
    from_status = ticket.status
    if from_status == status:
        return ticket
    return _apply(ticket, actor, "moved", "ticket.moved", _entering(ticket, status),
                  from_status=from_status.slug, to_status=status.slug)


@transaction.atomic
def archive_ticket(*, ticket: Ticket, actor: User) -> Ticket:
    ticket = _writable(ticket)
    return _apply(ticket, actor, "archived", "ticket.archived", {"archived_at": timezone.now()})


@transaction.atomic
def unarchive_ticket(*, ticket: Ticket, actor: User) -> Ticket:
    """Back on the board at the end of its column; unarchiving an active ticket changes nothing."""
    ticket = _locked(ticket)
    if ticket.archived_at is None:
        return ticket
    end_of_column = next_sort_order(project_id=ticket.project_id, status=ticket.status)
    return _apply(ticket, actor, "unarchived", "ticket.unarchived", {"archived_at": None, "sort_order": end_of_column})


@transaction.atomic
def delete_ticket(*, ticket: Ticket, actor: User) -> None:
    """Soft delete: the row stays (staff can restore it) and its number is never reused."""
    _apply(_locked(ticket), actor, "deleted", "ticket.deleted", {"deleted_at": timezone.now()})


@transaction.atomic
def restore_ticket(*, ticket: Ticket, actor: User) -> None:
    """Undo a soft delete (staff, from the admin): the ticket reappears at the end of its column."""
    ticket = _locked(ticket)
    if ticket.deleted_at is not None:
        end_of_column = next_sort_order(project_id=ticket.project_id, status=ticket.status)
        _apply(ticket, actor, "restored", "ticket.created", {"deleted_at": None, "sort_order": end_of_column})


def _set_assignee(ticket: Ticket, actor: User, user_id: int, *, assign: bool) -> Ticket:
    ticket = _writable(ticket)
    old_ids = set(ticket.assignees.values_list("pk", flat=True))
    if (user_id in old_ids) == assign:
        return ticket  # already as asked: no duplicate, no history
    (ticket.assignees.add if assign else ticket.assignees.remove)(user_id)
    ticket.save(update_fields=["updated_at"])
    new_ids = old_ids | {user_id} if assign else old_ids - {user_id}
    history.record(ticket=ticket, actor=actor, action="assigned" if assign else "unassigned",
                   changes={"assignees": history.ids_change(old_ids, new_ids)})
    broadcast.ticket_event("ticket.updated", ticket=ticket, actor=actor)
    return ticket


@transaction.atomic
def assign_user(*, ticket: Ticket, user: User, actor: User) -> Ticket:
    """`user` must be a member: the caller checks (projects.selectors.member_user)."""
    return _set_assignee(ticket, actor, user.pk, assign=True)


@transaction.atomic
def unassign_user(*, ticket: Ticket, user_id: int, actor: User) -> Ticket:
    """No membership check: a former member may still need to come off a ticket."""
    return _set_assignee(ticket, actor, user_id, assign=False)


@transaction.atomic
def sort_column(*, project: Project, status: Status, ticket_ids: list[int], actor: User) -> None:
    """Reorder a whole column: `ticket_ids` must be exactly its current tickets."""
    column = {ticket.pk: ticket for ticket in Ticket.objects.select_for_update().active()
              .filter(project=project, status=status)}
    if len(ticket_ids) != len(set(ticket_ids)) or set(ticket_ids) != set(column):
        raise RuleViolation("ticket_ids: must list exactly the tickets of the column, each once",
                            field="ticket_ids")
    entries = []
    for position, ticket_id in enumerate(ticket_ids):
        ticket = column[ticket_id]
        if ticket.sort_order != position:
            entries.append(history.entry(ticket=ticket, actor=actor, action="sorted",
                                         changes={"sort_order": {"old": ticket.sort_order, "new": position}}))
            ticket.sort_order = position
    if not entries:
        return
    Ticket.objects.bulk_update([entry.ticket for entry in entries], ["sort_order"])
    Activity.objects.bulk_create(entries)
    broadcast.column_sorted(project=project, status_slug=status.slug, ticket_ids=ticket_ids, actor=actor)


@transaction.atomic
def remove_tag_from_tickets(*, tag: Tag, actor: User) -> None:
    """Before a tag is deleted: its tickets record the change and their board cards refresh."""
    tickets = list(Ticket.objects.live().filter(tags=tag).prefetch_related("tags"))
    Activity.objects.bulk_create(
        history.entry(ticket=ticket, actor=actor, action="updated", changes={"tags": history.ids_change(
            [t.pk for t in ticket.tags.all()], [t.pk for t in ticket.tags.all() if t.pk != tag.pk])})
        for ticket in tickets
    )
    Ticket.tags.through.objects.filter(tag=tag).delete()
    for ticket in tickets:
        if ticket.archived_at is None:
            broadcast.ticket_event("ticket.updated", ticket=ticket, actor=actor)


# ---- ticket content: comments, checklist items, blockers -----------------------------------------


def _content_changed(ticket: Ticket, actor: User, action: str, changes: dict, *, on_board: bool) -> None:
    """A write to the content of the locked ticket: the ticket counts as updated and records it; the board
    hears of it when its card changes (the comment and checklist counts), not otherwise."""
    ticket.save(update_fields=["updated_at"])
    history.record(ticket=ticket, actor=actor, action=action, changes=changes)
    if on_board:
        broadcast.ticket_event("ticket.updated", ticket=ticket, actor=actor)


def _change_part(ticket: Ticket, part: Comment | ChecklistItem, actor: User, action: str, key: str, *,
                 on_board: bool, **values) -> None:
    """Write `values` to a comment or checklist item of the locked ticket; history shows them, old and new."""
    before = {"id": part.pk, **{field: getattr(part, field) for field in values}}
    for field, value in values.items():
        setattr(part, field, value)
    part.save()
    _content_changed(ticket, actor, action, {key: {"old": before, "new": {"id": part.pk, **values}}}, on_board=on_board)


def _comment_state(comment: Comment) -> dict:
    return {"id": comment.pk, "message": comment.message}


def _writable_comment(comment: Comment) -> tuple[Ticket, Comment]:
    """Its ticket locked and writable, and the comment read again under that lock (deleted meanwhile: 404)."""
    ticket = _writable(comment.ticket)
    return ticket, selectors.live_comment(comment_id=comment.pk)


@transaction.atomic
def add_comment(*, ticket: Ticket, author: User, message: str) -> Comment:
    ticket = _writable(ticket)
    comment = Comment.objects.create(ticket=ticket, author=author, message=message)
    _content_changed(ticket, author, "commented", {"comment": {"old": None, "new": _comment_state(comment)}},
                     on_board=True)
    return comment


@transaction.atomic
def edit_comment(*, comment: Comment, message: str, actor: User) -> Comment:
    ticket, comment = _writable_comment(comment)
    if comment.message != message:
        _change_part(ticket, comment, actor, "comment_edited", "comment", on_board=False, message=message)
    return comment


@transaction.atomic
def delete_comment(*, comment: Comment, actor: User) -> None:
    """Soft delete: the row stays, but the ticket no longer shows or counts it."""
    ticket, comment = _writable_comment(comment)
    comment.deleted_at = timezone.now()
    comment.save(update_fields=["deleted_at", "updated_at"])
    _content_changed(ticket, actor, "comment_deleted", {"comment": {"old": _comment_state(comment), "new": None}},
                     on_board=True)


def _item_state(item: ChecklistItem) -> dict:
    return {"id": item.pk, "text": item.text, "done": item.done}


def _writable_item(item: ChecklistItem) -> tuple[Ticket, ChecklistItem]:
    """Its ticket locked and writable, and the item read again under that lock (deleted meanwhile: 404)."""
    ticket = _writable(item.ticket)
    return ticket, selectors.checklist_item(item_id=item.pk)


@transaction.atomic
def add_checklist_item(*, ticket: Ticket, text: str, actor: User) -> ChecklistItem:
    """Appended at the end of the ticket's checklist, not done."""
    ticket = _writable(ticket)
    last = ticket.checklist_items.aggregate(last=Max("sort_order"))["last"]
    item = ChecklistItem.objects.create(ticket=ticket, text=text, sort_order=0 if last is None else last + 1)
    _content_changed(ticket, actor, "checklist_item_added", {"checklist_item": {"old": None, "new": _item_state(item)}},
                     on_board=True)
    return item


@transaction.atomic
def toggle_checklist_item(*, item: ChecklistItem, actor: User) -> ChecklistItem:
    # Flipped under the ticket's lock, so two toggles at once always end where they started.
    ticket, item = _writable_item(item)
    _change_part(ticket, item, actor, "checklist_item_toggled", "checklist_item", on_board=True, done=not item.done)
    return item


@transaction.atomic
def rename_checklist_item(*, item: ChecklistItem, text: str, actor: User) -> ChecklistItem:
    ticket, item = _writable_item(item)
    if item.text != text:
        _change_part(ticket, item, actor, "checklist_item_updated", "checklist_item", on_board=False, text=text)
    return item


@transaction.atomic
def delete_checklist_item(*, item: ChecklistItem, actor: User) -> None:
    ticket, item = _writable_item(item)
    before = _item_state(item)
    item.delete()
    _content_changed(ticket, actor, "checklist_item_deleted", {"checklist_item": {"old": before, "new": None}},
                     on_board=True)


@transaction.atomic
def sort_checklist(*, ticket: Ticket, item_ids: list[int], actor: User) -> None:
    """Reorder a ticket's checklist: `item_ids` must be exactly its items."""
    ticket = _writable(ticket)
    items = {item.pk: item for item in ticket.checklist_items.order_by("sort_order", "id")}
    if len(item_ids) != len(set(item_ids)) or set(item_ids) != set(items):
        raise RuleViolation("item_ids: must list exactly the items of the ticket, each once", field="item_ids")
    old_order = list(items)
    if item_ids == old_order:
        return
    for position, item_id in enumerate(item_ids):
        items[item_id].sort_order = position
    ChecklistItem.objects.bulk_update(items.values(), ["sort_order"])
    _content_changed(ticket, actor, "checklist_sorted", {"checklist_order": {"old": old_order, "new": item_ids}},
                     on_board=False)


def _blocks(*, project_id: int, start: int, goal: int) -> bool:
    """Whether ticket `start` blocks ticket `goal`, directly or through others.

    One query loads the links between the project's live tickets; the walk visits each ticket once.
    """
    blocked_by = defaultdict(list)
    for blocker_id, ticket_id in Blocker.objects.filter(
            ticket__project_id=project_id, ticket__deleted_at__isnull=True, blocker__deleted_at__isnull=True,
    ).values_list("blocker_id", "ticket_id"):
        blocked_by[blocker_id].append(ticket_id)
    seen, pending = {start}, [start]
    while pending:
        for ticket_id in blocked_by[pending.pop()]:
            if ticket_id == goal:
                return True
            if ticket_id not in seen:
                seen.add(ticket_id)
                pending.append(ticket_id)
    return False


@transaction.atomic
def add_blocker(*, ticket: Ticket, blocker: Ticket, actor: User) -> None:
    """`blocker` (a live ticket of the same project: the caller checks) comes to block `ticket`."""
    # One blocker link is added per project at a time: two links added at once could close a cycle
    # that neither transaction sees.
    Project.objects.select_for_update().only("pk").get(pk=ticket.project_id)
    ticket = _writable(ticket)
    if blocker.pk == ticket.pk:
        raise RuleViolation("blocker_ticket_id: a ticket cannot block itself", field="blocker_ticket_id")
    old_ids = set(ticket.blocked_by_links.values_list("blocker_id", flat=True))
    if blocker.pk in old_ids:
        return
    if _blocks(project_id=ticket.project_id, start=ticket.pk, goal=blocker.pk):
        raise RuleViolation(f"blocker_ticket_id: {ticket.prefix_ref} already blocks {blocker.prefix_ref}, "
                            "directly or through other tickets", field="blocker_ticket_id")
    Blocker.objects.create(ticket=ticket, blocker=blocker)
    _content_changed(ticket, actor, "blocker_added",
                     {"blockers": history.ids_change(old_ids, old_ids | {blocker.pk})}, on_board=False)


@transaction.atomic
def remove_blocker(*, ticket: Ticket, blocker_id: int, actor: User) -> None:
    """Removing a ticket that does not block this one changes nothing."""
    ticket = _writable(ticket)
    old_ids = set(ticket.blocked_by_links.values_list("blocker_id", flat=True))
    if blocker_id not in old_ids:
        return
    Blocker.objects.filter(ticket=ticket, blocker_id=blocker_id).delete()
    _content_changed(ticket, actor, "blocker_removed",
                     {"blockers": history.ids_change(old_ids, old_ids - {blocker_id})}, on_board=False)


# ---- attachments ---------------------------------------------------------------------------------


def _attachment_state(attachment: Attachment) -> dict:
    return {"id": attachment.pk, "name": attachment.original_name}


def attach_files(*, ticket: Ticket, uploads: list[Upload], actor: User,
                 comment: Comment | None = None) -> list[Attachment]:
    """Store checked uploads on the ticket (and on `comment`, one of its comments): all of them or none.

    The files go to storage before the transaction, so the ticket's lock (on SQLite the database's) is
    not held while up to 200 MB are written; whatever fails, the files already saved are removed.
    """
    attachments = [Attachment(ticket=ticket, comment=comment, original_name=upload.name, filesize=upload.file.size,
                              mime_type=upload.mime_type, uploaded_by=actor) for upload in uploads]
    try:
        for attachment, upload in zip(attachments, uploads, strict=True):
            # Stored under a generated name (attachment_path); the uploaded one is kept for display only.
            attachment.file.save(upload.name, upload.file, save=False)
        with transaction.atomic():
            if comment is None:
                ticket = _writable(ticket)
            else:
                ticket, _ = _writable_comment(comment)
            Attachment.objects.bulk_create(attachments)
            _content_changed(ticket, actor, "attachments_added",
                             {"attachments": {"old": None, "new": [_attachment_state(a) for a in attachments]}},
                             on_board=False)
    except BaseException:
        for attachment in attachments:
            attachment.file.delete(save=False)
        raise
    return attachments


@transaction.atomic
def delete_attachment(*, attachment: Attachment, actor: User) -> None:
    """The record goes now, the stored file once that is committed: a rollback keeps both."""
    ticket = _writable(attachment.ticket)
    attachment = selectors.live_attachment(attachment_id=attachment.pk)  # deleted meanwhile: 404
    state, file = _attachment_state(attachment), attachment.file
    attachment.delete()
    _content_changed(ticket, actor, "attachment_deleted", {"attachments": {"old": [state], "new": None}},
                     on_board=False)
    storage, name = file.storage, file.name
    transaction.on_commit(lambda: storage.delete(name), robust=True)  # not a partial: see broadcast.ticket_event
