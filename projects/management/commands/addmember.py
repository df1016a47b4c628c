from django.core.management.base import BaseCommand, CommandError

from accounts.models import User
from projects import services
from projects.models import Project
from projects.roles import Role


class Command(BaseCommand):
    help = "Add a user to a project with a role, or change their role; prints the role."

    def add_arguments(self, parser):
        parser.add_argument("project_id", type=int)
        parser.add_argument("username")
        parser.add_argument("role", choices=Role.values)

    def handle(self, *args, project_id, username, role, **options):
        project = Project.objects.filter(pk=project_id).first()
        if project is None:
            raise CommandError(f"project {project_id} does not exist")
        user = User.objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"user {username!r} does not exist")
        membership = services.set_member_role(project=project, user=user, role=Role(role))
        self.stdout.write(membership.role)
