"""A project's tags: created for its tickets, renamed or recoloured on their cards, taken off them when deleted."""

from django.db import transaction
from django.db.models import F, Max

from accounts.models import User
from core.errors import RuleViolation
from core.events import Action, Event
from core.rows import changed
from projects.models import Project, Tag
from tickets import broadcast, history
from tickets.models import Activity, Ticket


def _refuse_taken_name(project: Project, name: str, tag: Tag | None = None) -> None:
    """Names are unique in a project, whatever their case (the database's constraint backs this up)."""
    if Tag.objects.filter(project=project, name__iexact=name).exclude(pk=getattr(tag, "pk", None)).exists():
        raise RuleViolation("name: a tag with this name already exists", field="name")


@transaction.atomic
def create_tag(*, project: Project, name: str, color: str, actor: User) -> Tag:
    _refuse_taken_name(project, name)
    last = Tag.objects.filter(project=project).aggregate(last=Max("sort_order"))["last"]
    tag = Tag.objects.create(project=project, name=name, color=color.lower(), sort_order=0 if last is None else last + 1)
    broadcast.announce_tag(Event.TAG_CREATED, tag=tag, actor=actor)
    return tag


@transaction.atomic
def update_tag(*, tag: Tag, actor: User, **changes) -> Tag:
    """A new name or colour (those given); the cards of the board that carry the tag show it at once."""
    if "name" in changes:
        _refuse_taken_name(tag.project, changes["name"], tag)
    current = changed(Tag.objects.all(), tag.pk, "tag not found", changes)
    tag_edited(tag=current)
    on_board = list(Ticket.objects.active().filter(tags=current).order_by("pk"))
    broadcast.announce_tickets(Event.TICKET_UPDATED, project=tag.project, tickets=on_board, actor=actor)
    broadcast.announce_tag(Event.TAG_UPDATED, tag=current, actor=actor)
    return current


@transaction.atomic
def delete_tag(*, tag: Tag, actor: User) -> None:
    """Its tickets record the change and their board cards refresh, in a fixed number of queries however
    many tickets carry it; then the tag goes."""
    tickets = list(Ticket.objects.live().filter(tags=tag).prefetch_related("tags").order_by("pk"))
    Activity.objects.bulk_create(
        history.entry(ticket=ticket, actor=actor, action=Action.UPDATED, changes={"tags": history.ids_change(
            [t.pk for t in ticket.tags.all()], [t.pk for t in ticket.tags.all() if t.pk != tag.pk])})
        for ticket in tickets
    )
    Ticket.tags.through.objects.filter(tag=tag).delete()
    # Their details no longer show it: a new version each (their ETags).
    Ticket.objects.filter(pk__in=[ticket.pk for ticket in tickets]).update(version=F("version") + 1)
    on_board = [ticket for ticket in tickets if ticket.archived_at is None]
    broadcast.announce_tickets(Event.TICKET_UPDATED, project=tag.project, tickets=on_board, actor=actor)
    broadcast.announce_tag(Event.TAG_DELETED, tag=tag, actor=actor)  # before: delete() drops its id
    tag.delete()


def tag_edited(*, tag: Tag) -> None:
    """A tag renamed or recolored (in the admin): the details of its tickets show it, so each takes a new
    version (their ETags)."""
    Ticket.objects.filter(tags=tag).update(version=F("version") + 1)
