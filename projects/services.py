import re

from django.db import transaction

from accounts.consumers import close_sockets_after_commit, member_group
from accounts.models import User

from .models import EstimationMode, Membership, Project, Status, StatusCategory
from .roles import Role

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


@transaction.atomic
def configure_project(
    *, project: Project, docs_enabled: bool | None = None, estimation_mode: EstimationMode | None = None
) -> Project:
    if docs_enabled is not None:
        project.docs_enabled = docs_enabled
    if estimation_mode is not None:
        project.estimation_mode = estimation_mode
    project.save(update_fields=["docs_enabled", "estimation_mode"])
    return project
