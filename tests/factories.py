import factory
from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone
from factory.django import DjangoModelFactory

from accounts.models import User
from docs_area.models import Article, ArticleAttachment, ArticleComment, Folder
from notifications.models import Notification, NotificationType
from projects import services as project_services
from projects.models import Membership, Project, Status, StatusCategory, Tag
from projects.roles import Role
from tickets.models import Attachment, Blocker, ChecklistItem, Comment, Ticket
from timetracking.models import TimeEntry, TimerState

PASSWORD = "correct horse battery staple"


class UserFactory(DjangoModelFactory):
    class Meta:
        model = User

    username = factory.Sequence(lambda n: f"user{n}")
    name = factory.Sequence(lambda n: f"User {n:03d}")
    email = factory.LazyAttribute(lambda user: f"{user.username}@example.com")
    password = factory.django.Password(PASSWORD)


class ProjectFactory(DjangoModelFactory):
    """Created through the real service: owner membership and default statuses included."""

    class Meta:
        model = Project

    owner = factory.SubFactory(UserFactory)
    name = factory.Sequence(lambda n: f"Project {n:03d}")
    prefix = "PRJ"
    description = ""

    @classmethod
    def _create(cls, model_class, *, owner, name, prefix, description, **settings):
        project = project_services.create_project(owner=owner, name=name, prefix=prefix, description=description)
        if settings:
            Project.objects.filter(pk=project.pk).update(**settings)
            project.refresh_from_db()
        return project


class MembershipFactory(DjangoModelFactory):
    class Meta:
        model = Membership

    project = factory.SubFactory(ProjectFactory)
    user = factory.SubFactory(UserFactory)
    role = Role.EDITOR


class StatusFactory(DjangoModelFactory):
    class Meta:
        model = Status

    project = factory.SubFactory(ProjectFactory)
    slug = factory.Sequence(lambda n: f"column_{n}")
    label = factory.Sequence(lambda n: f"Column {n}")
    category = StatusCategory.ACTIVE
    sort_order = factory.Sequence(lambda n: 100 + n)


class TagFactory(DjangoModelFactory):
    class Meta:
        model = Tag

    project = factory.SubFactory(ProjectFactory)
    name = factory.Sequence(lambda n: f"tag-{n}")
    color = "#aabbcc"
    sort_order = factory.Sequence(lambda n: n)


class TicketFactory(DjangoModelFactory):
    class Meta:
        model = Ticket
        skip_postgeneration_save = True

    project = factory.SubFactory(ProjectFactory)
    title = factory.Sequence(lambda n: f"Ticket {n}")
    status = factory.LazyAttribute(lambda ticket: ticket.project.statuses.order_by("sort_order").first())
    created_by = factory.LazyAttribute(lambda ticket: ticket.project.owner)
    sort_order = factory.Sequence(lambda n: n)

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        with transaction.atomic():
            # A number as a creation takes it, without the frame's seq: a factory's ticket announces nothing.
            number = Project.objects.advance_counters(kwargs["project"].pk, last_ticket_number=1)["last_ticket_number"]
            return super()._create(model_class, *args, number=number, **kwargs)

    @factory.post_generation
    def tags(ticket, create, extracted, **kwargs):
        if create and extracted:
            ticket.tags.set(extracted)

    @factory.post_generation
    def assignees(ticket, create, extracted, **kwargs):
        if create and extracted:
            ticket.assignees.set(extracted)


class CommentFactory(DjangoModelFactory):
    class Meta:
        model = Comment

    ticket = factory.SubFactory(TicketFactory)
    author = factory.LazyAttribute(lambda comment: comment.ticket.created_by)
    message = factory.Sequence(lambda n: f"Comment {n}")


class ChecklistItemFactory(DjangoModelFactory):
    class Meta:
        model = ChecklistItem

    ticket = factory.SubFactory(TicketFactory)
    text = factory.Sequence(lambda n: f"Step {n}")
    sort_order = factory.Sequence(lambda n: n)


class BlockerFactory(DjangoModelFactory):
    """`blocker` blocks `ticket`, a ticket of the same project."""

    class Meta:
        model = Blocker

    ticket = factory.SubFactory(TicketFactory)
    blocker = factory.SubFactory(TicketFactory, project=factory.SelfAttribute("..ticket.project"))


class AttachmentFactory(DjangoModelFactory):
    """A stored text file on a ticket (in the test's MEDIA_ROOT)."""

    class Meta:
        model = Attachment

    ticket = factory.SubFactory(TicketFactory)
    original_name = factory.Sequence(lambda n: f"notes-{n}.txt")
    file = factory.LazyAttribute(lambda attachment: ContentFile(b"some notes", name=attachment.original_name))
    filesize = 10
    mime_type = "text/plain"
    uploaded_by = factory.LazyAttribute(lambda attachment: attachment.ticket.created_by)


class TimeEntryFactory(DjangoModelFactory):
    """A stopped entry of 30 minutes by the ticket's creator; pass is_running, started_at … for a timer."""

    class Meta:
        model = TimeEntry

    ticket = factory.SubFactory(TicketFactory)
    user = factory.LazyAttribute(lambda entry: entry.ticket.created_by)
    project = factory.LazyAttribute(lambda entry: entry.ticket.project)
    seconds = 30 * 60
    is_running = TimerState.STOPPED
    created_at = factory.LazyFunction(timezone.now)


class NotificationFactory(DjangoModelFactory):
    """An unread reaction notification about a ticket, for a user of its project (add the membership)."""

    class Meta:
        model = Notification

    ticket = factory.SubFactory(TicketFactory)
    project = factory.SelfAttribute("ticket.project")
    user = factory.SubFactory(UserFactory)
    actor = factory.LazyAttribute(lambda notification: notification.ticket.created_by)
    type = NotificationType.REACTION
    message = factory.LazyAttribute(
        lambda notification: f"{notification.actor.display_name} commented on {notification.ticket.prefix_ref}")


class FolderFactory(DjangoModelFactory):
    """A documentation folder; give `parent` (of the same project) to nest it."""

    class Meta:
        model = Folder

    project = factory.SubFactory(ProjectFactory)
    parent = None
    title = factory.Sequence(lambda n: f"Folder {n}")
    slug = factory.Sequence(lambda n: f"folder-{n}")
    sort_order = factory.Sequence(lambda n: n)
    created_by = factory.LazyAttribute(lambda folder: folder.project.owner)


class ArticleFactory(DjangoModelFactory):
    class Meta:
        model = Article

    project = factory.SubFactory(ProjectFactory)
    folder = None
    title = factory.Sequence(lambda n: f"Article {n}")
    slug = factory.Sequence(lambda n: f"article-{n}")
    content = "# Hello\n\nSome *Markdown*."
    sort_order = factory.Sequence(lambda n: n)
    created_by = factory.LazyAttribute(lambda article: article.project.owner)


class ArticleCommentFactory(DjangoModelFactory):
    class Meta:
        model = ArticleComment

    article = factory.SubFactory(ArticleFactory)
    user = factory.LazyAttribute(lambda comment: comment.article.created_by)
    message = factory.Sequence(lambda n: f"Remark {n}")


class ArticleAttachmentFactory(DjangoModelFactory):
    """A stored text file on an article (in the test's MEDIA_ROOT)."""

    class Meta:
        model = ArticleAttachment

    article = factory.SubFactory(ArticleFactory)
    original_name = factory.Sequence(lambda n: f"guide-{n}.txt")
    file = factory.LazyAttribute(lambda attachment: ContentFile(b"guide text", name=attachment.original_name))
    filesize = 10
    mime_type = "text/plain"
    uploaded_by = factory.LazyAttribute(lambda attachment: attachment.article.created_by)
