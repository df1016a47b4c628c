from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from config.api.schema import envelope, error_responses
from projects.roles import Role
from projects.views import ProjectScopedViewSet

from . import selectors


class ProjectTicketsViewSet(ProjectScopedViewSet):
    required_roles = {"stats": Role.VIEWER}

    @extend_schema(responses={200: envelope("ProjectStats", open_tickets=serializers.IntegerField()),
                              **error_responses(401, 404)})
    def stats(self, request, project_id):
        return Response({"open_tickets": selectors.open_ticket_count(project=self.project)})
