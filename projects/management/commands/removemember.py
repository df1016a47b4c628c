from django.core.management.base import BaseCommand, CommandError

from accounts.models import User
from projects import services
from projects.models import Project


class Command(BaseCommand):
    help = "Remove a user from a project; their open board websockets for it are closed."

    def add_arguments(self, parser):
        parser.add_argument("project_id", type=int)
        parser.add_argument("username")

    def handle(self, *args, project_id, username, **options):
        project = Project.objects.filter(pk=project_id).first()
        if project is None:
            raise CommandError(f"project {project_id} does not exist")
        user = User.objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"user {username!r} does not exist")
        if not services.remove_member(project=project, user=user):
            raise CommandError(f"{username!r} is not a member of project {project_id}")
        self.stdout.write("removed")
