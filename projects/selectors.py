import re

from django.db.models import QuerySet, Value
from django.db.models.functions import Coalesce, Lower, NullIf
from django.http import Http404

from accounts.models import User
from accounts.services import token_digest
from core.errors import RuleViolation
from core.queries import PreparedLookup
from core.rows import found

from .models import Invitation, Membership, Project, Status, Tag

# Every project-scoped request makes one of these lookups: compiled once.
membership_with_project = PreparedLookup(
    Membership, lambda memberships, user, project: memberships.filter(user_id=user, project_id=project),
    related=("project",))


def membership_for(*, user: User, project_id: int) -> Membership:
    """The caller's membership with its project; a missing project and a non-member look the same."""
    membership = membership_with_project(user=user.pk, project=project_id)
    if membership is None:
        raise Http404("project not found")
    return membership


def memberships_of(*, user: User) -> QuerySet[Membership]:
    return Membership.objects.filter(user=user).select_related("project").order_by(Lower("project__name"), "project_id")


def project_members(*, project: Project) -> QuerySet[Membership]:
    return (
        Membership.objects.filter(project=project)
        .select_related("user")
        .order_by(Lower(Coalesce(NullIf("user__name", Value("")), "user__username")), "user_id")
    )


def project_statuses(*, project: Project) -> QuerySet[Status]:
    return Status.objects.filter(project=project).order_by("sort_order", "id")


def status_in_project(*, project: Project, slug: str) -> Status:
    status = found(project_statuses(project=project).filter(slug=slug), "status not found")
    status.project = project
    return status


def member_of_project(*, project: Project, user_id: int) -> Membership:
    """A member of the project with their user, for a change of role or a removal."""
    membership = found(Membership.objects.filter(project=project, user_id=user_id).select_related("user"),
                       "member not found")
    membership.project = project
    return membership


def project_tags(*, project: Project) -> QuerySet[Tag]:
    return Tag.objects.filter(project=project).order_by("sort_order", "id")


def tag_in_project(*, project: Project, tag_id: int) -> Tag:
    tag = found(project_tags(project=project).filter(pk=tag_id), "tag not found")
    tag.project = project
    return tag


def member_user(*, project: Project, user_id: int) -> User:
    """A user of the project, for assigning: anyone else is a 422 naming `user_id`."""
    membership = Membership.objects.select_related("user").filter(project=project, user_id=user_id).first()
    if membership is None:
        raise RuleViolation("user_id: user is not a member of this project", field="user_id")
    return membership.user


def pending_invitations(*, project: Project) -> QuerySet[Invitation]:
    pending = Invitation.objects.pending().filter(project=project)
    return pending.select_related("invited_by").order_by("-created_at", "-id")


def invitation(*, invitation_id: int) -> Invitation:
    """An invitation by its id, whatever its state; whether the caller may see it is their membership's to say."""
    return found(Invitation.objects.select_related("invited_by").filter(pk=invitation_id), "invitation not found")


# What secrets.token_urlsafe(32) writes: anything else is no link of ours, and is not looked up.
INVITATION_TOKEN = re.compile(r"[A-Za-z0-9_-]{43}")


def invitation_by_token(*, token: str) -> Invitation | None:
    """The invitation a link names, with its project, whatever its state; None for a link that names none."""
    if INVITATION_TOKEN.fullmatch(token) is None:
        return None
    return Invitation.objects.select_related("project").filter(digest=token_digest(token)).first()
