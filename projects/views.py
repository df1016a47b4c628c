from functools import cached_property

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.viewsets import ViewSet

from config.api.inputs import validated
from config.api.schema import envelope, error_responses

from . import selectors, services
from .models import Membership
from .permissions import HasProjectRole
from .roles import Role
from .serializers import (
    CreateProjectInput,
    CreateTagInput,
    MemberOutput,
    MembershipProjectOutput,
    ProjectOutput,
    StatusOutput,
    TagOutput,
)


class ProjectScopedViewSet(ViewSet):
    """Base of every view that works inside one project.

    The caller's membership is resolved once per request from `get_project_id()`;
    subclasses reaching a project through a ticket, a comment or an entry override it.
    `required_roles` names the least role per action.
    """

    permission_classes = [IsAuthenticated, HasProjectRole]
    required_roles: dict[str, Role] = {}
    # What a non-member is told: views reached through an object say what a missing object says,
    # so nobody can tell an id of someone else's project exists.
    not_found_message = "project not found"

    def get_project_id(self) -> int:
        return self.kwargs["project_id"]

    @cached_property
    def membership(self) -> Membership:
        try:
            return selectors.membership_for(user=self.request.user, project_id=self.get_project_id())
        except NotFound:
            raise NotFound(self.not_found_message) from None

    @property
    def project(self):
        return self.membership.project


class ProjectCollectionViewSet(ViewSet):
    @extend_schema(responses={200: envelope("ProjectList", projects=MembershipProjectOutput(many=True)),
                              **error_responses(401)})
    def list(self, request):
        memberships = selectors.memberships_of(user=request.user)
        return Response({"projects": MembershipProjectOutput(memberships, many=True).data})

    @extend_schema(request=CreateProjectInput,
                   responses={201: envelope("ProjectCreated", project=ProjectOutput()), **error_responses(401, 422)})
    def create(self, request):
        data = validated(CreateProjectInput, request.data)
        project = services.create_project(owner=request.user, **data)
        return Response({"project": ProjectOutput(project).data}, status=status.HTTP_201_CREATED)


class ProjectViewSet(ProjectScopedViewSet):
    required_roles = {"statuses": Role.VIEWER, "members": Role.VIEWER}

    @extend_schema(responses={200: envelope("StatusList", statuses=StatusOutput(many=True)),
                              **error_responses(401, 404)})
    def statuses(self, request, project_id):
        statuses = selectors.project_statuses(project=self.project)
        return Response({"statuses": StatusOutput(statuses, many=True).data})

    @extend_schema(responses={200: envelope("MemberList", members=MemberOutput(many=True)),
                              **error_responses(401, 404)})
    def members(self, request, project_id):
        members = selectors.project_members(project=self.project)
        return Response({"members": MemberOutput(members, many=True).data})


class TagViewSet(ProjectScopedViewSet):
    required_roles = {"list": Role.VIEWER, "create": Role.MANAGER, "destroy": Role.MANAGER}

    @extend_schema(responses={200: envelope("TagList", tags=TagOutput(many=True)), **error_responses(401, 404)})
    def list(self, request, project_id):
        return Response({"tags": TagOutput(selectors.project_tags(project=self.project), many=True).data})

    @extend_schema(request=CreateTagInput,
                   responses={201: envelope("TagCreated", tag=TagOutput()), **error_responses(401, 403, 404, 422)})
    def create(self, request, project_id):
        data = validated(CreateTagInput, request.data)
        tag = services.create_tag(project=self.project, **data)
        return Response({"tag": TagOutput(tag).data}, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={200: envelope("TagDeleted", ok=True), **error_responses(401, 403, 404)})
    def destroy(self, request, project_id, tag_id):
        tag = selectors.tag_in_project(project=self.project, tag_id=tag_id)
        services.delete_tag(tag=tag, actor=request.user)
        return Response({"ok": True})
