from django.core.management.base import BaseCommand, CommandError

from projects import services
from projects.models import EstimationMode, Project


class Command(BaseCommand):
    help = "Change a project's settings; prints ok."

    def add_arguments(self, parser):
        parser.add_argument("project_id", type=int)
        parser.add_argument("--docs", choices=["on", "off"])
        parser.add_argument("--estimation", choices=EstimationMode.values)

    def handle(self, *args, project_id, docs, estimation, **options):
        project = Project.objects.filter(pk=project_id).first()
        if project is None:
            raise CommandError(f"project {project_id} does not exist")
        changes = {}
        if docs is not None:
            changes["docs_enabled"] = docs == "on"
        if estimation:
            changes["estimation_mode"] = EstimationMode(estimation)
        services.update_project(project=project, **changes)
        self.stdout.write("ok")
