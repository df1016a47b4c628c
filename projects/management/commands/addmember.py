from django.core.management.base import BaseCommand

from projects import services
from projects.management.lookups import project_and_user
from projects.roles import Role


class Command(BaseCommand):
    help = "Add a user to a project with a role, or change their role; prints the role."

    def add_arguments(self, parser):
        parser.add_argument("project_id", type=int)
        parser.add_argument("username")
        parser.add_argument("role", choices=Role.values)

    def handle(self, *args, project_id, username, role, **options):
        project, user = project_and_user(project_id, username)
        membership = services.set_member_role(project=project, user=user, role=Role(role))
        self.stdout.write(membership.role)
