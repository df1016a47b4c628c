from django.core.management.base import CommandError

from accounts.models import User
from projects.models import Project


def project_and_user(project_id: int, username: str) -> tuple[Project, User]:
    """The project and user a membership command names, or the CommandError saying which does not exist."""
    project = Project.objects.filter(pk=project_id).first()
    if project is None:
        raise CommandError(f"project {project_id} does not exist")
    user = User.objects.filter(username=username).first()
    if user is None:
        raise CommandError(f"user {username!r} does not exist")
    return project, user
