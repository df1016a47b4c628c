import re
import secrets
from datetime import timedelta

from django.db import transaction
from django.db.models import Max
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.text import slugify

from accounts.consumers import close_sockets_after_commit, member_group
from accounts.models import User
from accounts.services import create_user, token_digest
from core.errors import Conflict, RuleViolation
from core.events import Event
from core.mail import queue_email, site_url
from core.rows import UNCHANGED, changed
from events.publish import announce

from .models import EstimationMode, Invitation, Membership, Project, Status, StatusCategory
from .roles import Role
from .serializers import StatusOutput

DEFAULT_STATUSES = [
    # slug, label, color, icon, category
    ("backlog", "Backlog", "#6c757d", "bi-inbox", StatusCategory.BACKLOG),
    ("todo", "To do", "#0d6efd", "bi-list-task", StatusCategory.TODO),
    ("in_progress", "In progress", "#fd7e14", "bi-play-circle", StatusCategory.ACTIVE),
    ("review", "Review", "#6f42c1", "bi-eye", StatusCategory.REVIEW),
    ("done", "Done", "#198754", "bi-check-circle", StatusCategory.DONE),
]


def prefix_from_name(name: str) -> str:
    """"Mobile app" → "MA", "Backend" → "BACK": initials of several words, else the word's start."""
    words = re.findall(r"[A-Za-z0-9]+", name)
    if not words:
        return "PRJ"
    if len(words) == 1:
        return words[0][:4].upper()
    return "".join(word[0] for word in words)[:10].upper()


@transaction.atomic
def create_project(*, owner: User, name: str, prefix: str = "", description: str = "") -> Project:
    project = Project.objects.create(
        owner=owner, name=name, prefix=(prefix or prefix_from_name(name)).upper(), description=description
    )
    Membership.objects.create(project=project, user=owner, role=Role.MANAGER)
    Status.objects.bulk_create(
        Status(project=project, slug=slug, label=label, color=color, icon=icon, category=category, sort_order=index)
        for index, (slug, label, color, icon, category) in enumerate(DEFAULT_STATUSES)
    )
    return project


@transaction.atomic
def set_member_role(*, project: Project, user: User, role: Role) -> Membership:
    """Add the user with `role`, or change their role (the operator's addmember)."""
    membership, _ = Membership.objects.update_or_create(project=project, user=user, defaults={"role": role})
    return membership


@transaction.atomic
def remove_member(*, project: Project, user: User) -> bool:
    """Remove the user from the project and close their board websockets for it, once committed; their
    other projects' boards and their notification stream stay open. False when they were not a member.
    A role change is not a removal: a member downgraded to viewer goes on watching."""
    deleted, _ = Membership.objects.filter(project=project, user=user).delete()
    if deleted:
        close_sockets_after_commit([member_group(project.pk, user.pk)])
    return bool(deleted)


def _keep_owner_manager(membership: Membership, role: Role | None) -> None:
    """Through the API, the project's owner stays one of its managers: never removed (role None), never given
    another role. (Staff may change the owner, or anything, in the admin; the operator's commands too.)"""
    if membership.user_id == membership.project.owner_id and role != Role.MANAGER:
        raise RuleViolation("role: the project's owner stays its manager", field="role")


@transaction.atomic
def change_member_role(*, membership: Membership, role: Role) -> Membership:
    _keep_owner_manager(membership, role)
    membership.role = role
    membership.save(update_fields=["role"])
    return membership


@transaction.atomic
def remove_membership(*, membership: Membership) -> None:
    _keep_owner_manager(membership, None)
    remove_member(project=membership.project, user=membership.user)


@transaction.atomic
def update_project(*, project: Project, name=UNCHANGED, prefix=UNCHANGED, description=UNCHANGED,
                   docs_enabled=UNCHANGED, estimation_mode: EstimationMode = UNCHANGED) -> Project:
    """The settings given (the rest as they are), on the project row read again under its lock."""
    changes = {field: value for field, value in [
        ("name", name), ("prefix", prefix if prefix is UNCHANGED else prefix.upper()), ("description", description),
        ("docs_enabled", docs_enabled), ("estimation_mode", estimation_mode)] if value is not UNCHANGED}
    changed(Project.objects.all(), project.pk, "project not found", changes)
    for field, value in changes.items():  # the caller's copy (a membership's project) shows them too
        setattr(project, field, value)
    return project


# ---- statuses (the board's columns) -------------------------------------------------------------------


def _announce_status(event: Event, status: Status, actor: User) -> None:
    announce(project_id=status.project_id, actor=actor, frames=[{"event": event, "status": StatusOutput(status).data}])


def _free_slug(project: Project, label: str) -> str:
    """"In review" → "in_review"; "in_review_2", "_3", … when the project has it already."""
    base = slugify(label).replace("-", "_")[:45] or "status"
    taken = set(Status.objects.filter(project=project, slug__startswith=base).values_list("slug", flat=True))
    return next(slug for slug in [base, *(f"{base}_{n}" for n in range(2, len(taken) + 3))] if slug not in taken)


@transaction.atomic
def create_status(*, project: Project, label: str, actor: User, slug: str = "", color: str = "#6c757d",
                  category: StatusCategory = StatusCategory.TODO, hidden: bool = False) -> Status:
    """A new column at the end of the board. Under the project's lock: two at once never share a slug."""
    Project.objects.lock(project.pk)
    if slug and Status.objects.filter(project=project, slug=slug).exists():
        raise RuleViolation("slug: the project has a status with this slug", field="slug")
    last = Status.objects.filter(project=project).aggregate(last=Max("sort_order"))["last"]
    status = Status.objects.create(
        project=project, slug=slug or _free_slug(project, label), label=label, color=color,
        category=category, hidden=hidden, sort_order=0 if last is None else last + 1)
    _announce_status(Event.STATUS_CREATED, status, actor)
    return status


@transaction.atomic
def update_status(*, status: Status, actor: User, **changes) -> Status:
    """Label, color, category, hidden: those given."""
    current = changed(Status.objects.all(), status.pk, "status not found", changes)
    _announce_status(Event.STATUS_UPDATED, current, actor)
    return current


@transaction.atomic
def delete_status(*, status: Status, actor: User) -> None:
    """Only a column no ticket is in, on the board or archived, and never the last one. Deleted tickets (which
    only staff can restore) move to the first column that stays."""
    Project.objects.lock(status.project_id)
    remaining = Status.objects.filter(project_id=status.project_id).exclude(pk=status.pk).order_by("sort_order", "id")
    first = remaining.first()
    if first is None:
        raise RuleViolation("status: a project keeps at least one status", field="status")
    in_use = status.tickets.filter(deleted_at__isnull=True).count()
    if in_use:
        raise RuleViolation(f"status: the column still holds {in_use} ticket{'' if in_use == 1 else 's'} (archived "
                            "ones count): move or delete them first", field="status")
    status.tickets.update(status=first)
    _announce_status(Event.STATUS_DELETED, status, actor)  # before: delete() drops its id
    status.delete()


@transaction.atomic
def sort_statuses(*, project: Project, slugs: list[str], actor: User) -> None:
    """The columns in the order given: exactly the project's slugs, each once."""
    Project.objects.lock(project.pk)
    statuses = {status.slug: status for status in Status.objects.filter(project=project)}
    if sorted(slugs) != sorted(statuses):
        raise RuleViolation("slugs: must list every status of the project exactly once", field="slugs")
    for index, slug in enumerate(slugs):
        statuses[slug].sort_order = index
    Status.objects.bulk_update(statuses.values(), ["sort_order"])
    announce(project_id=project.pk, actor=actor, frames=[{"event": Event.STATUSES_SORTED, "slugs": slugs}])


# ---- invitations (decisions.md, "E-mail") -----------------------------------------------------------------

INVITATION_LIFETIME = timedelta(days=7)


@transaction.atomic
def invite(*, project: Project, email: str, role: Role, invited_by: User) -> Invitation:
    """An invitation, and its e-mail queued in the same transaction. Under the project's lock, so that of two
    invitations to one address at once the second sees the first (409)."""
    Project.objects.lock(project.pk)
    if Membership.objects.filter(project=project, user__email__iexact=email).exists():
        raise Conflict("email: a member of the project has this address", field="email")
    if Invitation.objects.pending().filter(project=project, email__iexact=email).exists():
        raise Conflict("email: an invitation to this address is pending", field="email")
    token, now = secrets.token_urlsafe(32), timezone.now()
    invitation = Invitation.objects.create(
        project=project, email=email, role=role, invited_by=invited_by, digest=token_digest(token), created_at=now,
        expires_at=now + INVITATION_LIFETIME)
    context = {"project": project, "inviter": invited_by.display_name, "role": role,
               "link": site_url(reverse("invitation-page", args=[token])), "expires_at": invitation.expires_at}
    queue_email(kind="invitation", to=email,
                subject=f"{invited_by.display_name} invites you to {project.name}",
                text=render_to_string("projects/emails/invitation.txt", context),
                html=render_to_string("projects/emails/invitation.html", context))
    return invitation


@transaction.atomic
def revoke_invitation(*, invitation: Invitation) -> None:
    """The link stops working. An accepted invitation has done its work: 422."""
    locked = Invitation.objects.select_for_update().get(pk=invitation.pk)
    if locked.accepted_at is not None:
        raise RuleViolation("invitation: already accepted", field="invitation")
    if locked.revoked_at is None:
        locked.revoked_at = timezone.now()
        locked.save(update_fields=["revoked_at"])


@transaction.atomic
def accept_invitation(*, invitation: Invitation, user: User) -> Membership:
    """The user joins with the invited role (a member already keeps their role), and the link is used up.
    The invitation is read again under its lock: of two acceptances at once, one joins."""
    locked = Invitation.objects.select_for_update().get(pk=invitation.pk)
    if locked.closed_because is not None:
        raise RuleViolation(f"invitation: {locked.closed_because}", field="invitation")
    membership, _ = Membership.objects.get_or_create(project_id=locked.project_id, user=user,
                                                     defaults={"role": locked.role})
    locked.accepted_at, locked.accepted_by = timezone.now(), user
    locked.save(update_fields=["accepted_at", "accepted_by"])
    return membership


@transaction.atomic
def join_with_new_account(*, invitation: Invitation, username: str, password: str) -> User:
    """An account with the invited address, already a member; nothing at all when the link no longer works."""
    user = create_user(username=username, email=invitation.email, password=password)
    accept_invitation(invitation=invitation, user=user)
    return user
