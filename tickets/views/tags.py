"""A project's tags, for its tickets."""

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response

from core.api.inputs import validated
from core.api.schema import envelope, error_responses
from projects import selectors as project_selectors
from projects.roles import Role
from projects.serializers import CreateTagInput, TagOutput, UpdateTagInput
from projects.views import ProjectScopedViewSet

from .. import services


class TagViewSet(ProjectScopedViewSet):
    """A project's tags, for its tickets."""

    required_roles = {"list": Role.VIEWER, "create": Role.MANAGER, "update": Role.MANAGER, "destroy": Role.MANAGER}

    def find_object(self):
        if "tag_id" not in self.kwargs:
            return None  # the project's tag list
        return project_selectors.tag_in_project(project=self.project, tag_id=self.kwargs["tag_id"])

    @extend_schema(responses={200: envelope("TagList", tags=TagOutput(many=True)), **error_responses(401, 404)})
    def list(self, request, project_id):
        """List tags."""
        return Response({"tags": TagOutput(project_selectors.project_tags(project=self.project), many=True).data})

    @extend_schema(request=CreateTagInput,
                   responses={201: envelope("TagCreated", tag=TagOutput()), **error_responses(401, 403, 404, 422)})
    def create(self, request, project_id):
        """Create a tag."""
        data = validated(CreateTagInput, request.data)
        tag = services.create_tag(project=self.project, actor=request.user, **data)
        return Response({"tag": TagOutput(tag).data}, status=status.HTTP_201_CREATED)

    @extend_schema(description="Send only what changes; another tag of the project with the name (whatever its "
                               "case): 422. The board's cards that carry it show it at once.",
                   request=UpdateTagInput,
                   responses={200: envelope("TagUpdated", tag=TagOutput()), **error_responses(401, 403, 404, 422)})
    def update(self, request, project_id, tag_id):
        """Rename or recolour a tag."""
        changes = validated(UpdateTagInput, request.data)
        tag = services.update_tag(tag=self.object, actor=request.user, **changes)
        return Response({"tag": TagOutput(tag).data})

    @extend_schema(request=None, responses={200: envelope("TagDeleted", ok=True), **error_responses(401, 403, 404)})
    def destroy(self, request, project_id, tag_id):
        """Delete a tag."""
        services.delete_tag(tag=self.object, actor=request.user)
        return Response({"ok": True})
