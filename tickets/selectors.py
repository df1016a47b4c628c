from datetime import timedelta

from django.db.models import Count, IntegerField, OuterRef, Prefetch, QuerySet, Subquery, prefetch_related_objects
from django.db.models.functions import Coalesce
from django.http import Http404
from django.utils import timezone

from accounts.models import User
from projects.models import Project, StatusCategory, Tag

from .models import Activity, Attachment, Blocker, ChecklistItem, Comment, Ticket

ARCHIVED_LIST_LIMIT = 100
VELOCITY_WINDOW = timedelta(days=7)


def count_of(model, **filters) -> Coalesce:
    """A per-ticket count as a subquery: several of them never multiply each other's rows."""
    rows = (model.objects.filter(ticket=OuterRef("pk"), **filters).order_by().values("ticket")
            .annotate(n=Count("pk")).values("n"))
    return Coalesce(Subquery(rows, output_field=IntegerField()), 0)


def ordered_tags() -> Prefetch:
    # to_attr: a plain list per ticket, without the queryset Django would build for each one.
    return Prefetch("tags", queryset=Tag.objects.order_by("sort_order", "id"), to_attr="tag_list")


def _assignees() -> Prefetch:
    return Prefetch("assignees", queryset=User.objects.order_by("id"), to_attr="assignee_list")


# Lists prefetch (not select_related) the project, status and creator: one shared object per
# distinct row instead of a copy per ticket, which on a board of thousands is most of the work.
SHARED_RELATIONS = ("project", "status")


def _list_tickets() -> QuerySet[Ticket]:
    return Ticket.objects.prefetch_related(*SHARED_RELATIONS, ordered_tags())


def ticket_list(*, project: Project, status=None) -> QuerySet[Ticket]:
    tickets = _list_tickets().active().filter(project=project)
    if status is not None:
        tickets = tickets.filter(status=status)
    return tickets.order_by("sort_order", "id")


def with_board_fields(tickets: QuerySet[Ticket]) -> QuerySet[Ticket]:
    return (
        tickets.prefetch_related(*SHARED_RELATIONS, "created_by", ordered_tags(), _assignees())
        .annotate(
            reaction_count=count_of(Comment, deleted_at__isnull=True),
            checklist_total=count_of(ChecklistItem),
            checklist_done=count_of(ChecklistItem, done=True),
        )
    )


def board_tickets(*, project: Project) -> QuerySet[Ticket]:
    return with_board_fields(Ticket.objects.active().filter(project=project)).order_by("sort_order", "id")


def board_tickets_by_id(*, ticket_ids: list[int]) -> QuerySet[Ticket]:
    """Tickets in their board shape whatever their state (a frame may announce a deletion)."""
    return with_board_fields(Ticket.objects.filter(pk__in=ticket_ids))


def board_ticket(*, ticket_id: int) -> Ticket:
    return board_tickets_by_id(ticket_ids=[ticket_id]).get()


def velocity(*, project: Project) -> int:
    """Tickets that entered a done column in the last 7 days and are still in one."""
    return Ticket.objects.live().filter(
        project=project, status__category=StatusCategory.DONE, done_at__gte=timezone.now() - VELOCITY_WINDOW
    ).count()


def open_ticket_count(*, project: Project) -> int:
    return Ticket.objects.active().filter(project=project).exclude(status__category=StatusCategory.DONE).count()


def ticket_in_project(*, project: Project, number: int) -> Ticket:
    """A live (not deleted) ticket of the project by its number; archived ones included."""
    ticket = (Ticket.objects.live().select_related("project", "status", "created_by")
              .filter(project=project, number=number).first())
    if ticket is None:
        raise Http404("ticket not found")
    return ticket


def live_ticket(*, ticket_id: int) -> Ticket:
    """A live ticket by its global id, for views that reach the project through it."""
    ticket = Ticket.objects.live().select_related("project", "status").filter(pk=ticket_id).first()
    if ticket is None:
        raise Http404("ticket not found")
    return ticket


def _live_blocker_links() -> QuerySet[Blocker]:
    return Blocker.objects.filter(blocker__deleted_at__isnull=True).select_related("blocker__status").order_by(
        "blocker__number")


def ticket_blockers(*, ticket: Ticket) -> QuerySet[Blocker]:
    """The Blocker entries of a ticket, as its detail lists them."""
    return _live_blocker_links().filter(ticket=ticket)


def _shown_attachments() -> QuerySet[Attachment]:
    """Attachments minus those of deleted comments, which go with their comment."""
    return Attachment.objects.filter(comment__deleted_at__isnull=True)


def ticket_detail(*, ticket: Ticket) -> Ticket:
    """The parts ticket detail shows, loaded onto a ticket found by ticket_in_project."""
    prefetch_related_objects(
        [ticket],
        ordered_tags(),
        _assignees(),
        Prefetch("checklist_items", queryset=ChecklistItem.objects.order_by("sort_order", "id")),
        Prefetch("comments", to_attr="live_comments", queryset=Comment.objects.filter(
            deleted_at__isnull=True).select_related("author").order_by("created_at", "id")),
        Prefetch("blocked_by_links", to_attr="live_blockers", queryset=_live_blocker_links()),
        Prefetch("attachments", queryset=_shown_attachments().order_by("id")),
    )
    return ticket


def archived_tickets(*, project: Project, title_query: str = "") -> QuerySet[Ticket]:
    tickets = (Ticket.objects.live().filter(project=project, archived_at__isnull=False)
               .select_related("project", "status").order_by("-archived_at", "-id"))
    if len(title_query) >= 2:
        tickets = tickets.filter(title__icontains=title_query)
    return tickets[:ARCHIVED_LIST_LIMIT]


def column_ticket_ids(*, project: Project, status) -> list[int]:
    return list(Ticket.objects.active().filter(project=project, status=status)
                .order_by("sort_order", "id").values_list("pk", flat=True))


def ticket_history(*, ticket: Ticket) -> QuerySet[Activity]:
    return Activity.objects.filter(ticket=ticket).select_related("actor").order_by("-created_at", "-id")


def live_comment(*, comment_id: int) -> Comment:
    """A comment that is not deleted, on a ticket that is not deleted, with its ticket."""
    comment = (Comment.objects.select_related("ticket")
               .filter(pk=comment_id, deleted_at__isnull=True, ticket__deleted_at__isnull=True).first())
    if comment is None:
        raise Http404("comment not found")
    return comment


def checklist_item(*, item_id: int) -> ChecklistItem:
    """A checklist item of a ticket that is not deleted, with its ticket."""
    item = ChecklistItem.objects.select_related("ticket").filter(pk=item_id, ticket__deleted_at__isnull=True).first()
    if item is None:
        raise Http404("checklist item not found")
    return item


def live_attachment(*, attachment_id: int) -> Attachment:
    """An attachment still shown on a ticket that is not deleted, with its ticket."""
    attachment = (_shown_attachments().select_related("ticket")
                  .filter(pk=attachment_id, ticket__deleted_at__isnull=True).first())
    if attachment is None:
        raise Http404("attachment not found")
    return attachment
