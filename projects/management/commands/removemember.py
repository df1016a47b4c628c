from django.core.management.base import BaseCommand, CommandError

from projects import services
from projects.management.lookups import project_and_user


class Command(BaseCommand):
    help = "Remove a user from a project; their open board websockets for it are closed."

    def add_arguments(self, parser):
        parser.add_argument("project_id", type=int)
        parser.add_argument("username")

    def handle(self, *args, project_id, username, **options):
        project, user = project_and_user(project_id, username)
        if not services.remove_member(project=project, user=user):
            raise CommandError(f"{username!r} is not a member of project {project_id}")
        self.stdout.write("removed")
