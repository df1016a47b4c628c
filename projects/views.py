from functools import cached_property
from operator import attrgetter

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.viewsets import ViewSet

from config.api.inputs import validated
from config.api.schema import envelope, error_responses
from core.queries import Read, rows_together

from . import selectors, services
from .models import Membership
from .permissions import HasProjectRole, Rule
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
    """Base of every view that works inside one project, and of those whose URL names an object of one.

    Before any handler runs (in DRF's `initial`, through HasProjectRole), the request is resolved in
    this order: the token (401); the object the URL names and the caller's membership of its project
    (404 for either, worded alike so nobody can tell that an id of someone else's project exists);
    the view's role table (403). The handler then only validates its body (422) and calls a service.

    A view declares how: `find_object()` for the object its URL names, and `project_of` when the
    project is reached through that object rather than `{project_id}` in the URL. What it reads from the
    URL alone (the membership of `{project_id}`, and more in a view that extends `reads_with_token`)
    travels with the token's lookup.
    """

    permission_classes = [IsAuthenticated, HasProjectRole]
    required_roles: dict[str, Rule] = {}
    # How the project is reached from the object, for URLs without {project_id} (e.g. "ticket.project_id").
    project_of: str | None = None
    # Actions that receive files: multipart/form-data; every other action takes JSON only (a form is a 415).
    upload_actions: frozenset[str] = frozenset()
    not_found_message = "project not found"

    def get_parsers(self):
        # DRF asks before it sets self.action (the schema generator sets it first, with no request).
        request = getattr(self, "request", None)
        action = self.action_map.get(request.method.lower()) if request is not None else self.action
        if action in self.upload_actions:
            return [MultiPartParser()]
        return super().get_parsers()

    def find_object(self):
        """The object the URL names (raising Http404 when there is none), or None for project-wide routes."""
        return None

    @cached_property
    def object(self):
        return self.find_object()

    def reads_with_token(self, digest: str) -> list[Read]:
        """What the view reads before its handler from its URL and the caller's token (by its `digest`), in
        this order: the caller's membership of `{project_id}` first. The bearer authentication sends them in
        the round trip of the token's own lookup, and sets `rows_read_with_token` to their rows.

        A view that reaches its project through the object its URL names (`project_of`) reads nothing here.
        """
        if self.project_of is not None:
            return []
        return [selectors.membership_by_token.call(digest=digest, project=self.kwargs["project_id"])]

    @cached_property
    def rows_read_with_token(self) -> list[list[tuple]]:
        """The rows of reads_with_token(), in their order: read here only when no bearer authentication sent
        them."""
        return rows_together(*self.reads_with_token(self.request.auth.digest))

    @cached_property
    def membership(self) -> Membership:
        if self.project_of is None:
            membership = selectors.membership_by_token.instance(self.rows_read_with_token[0])
        else:
            membership = selectors.membership_with_project(user=self.request.user.pk,
                                                           project=attrgetter(self.project_of)(self.object))
        if membership is None:
            raise Http404(self.not_found_message)
        return membership

    @property
    def project(self):
        return self.membership.project


class ProjectCollectionViewSet(ViewSet):
    @extend_schema(responses={200: envelope("ProjectList", projects=MembershipProjectOutput(many=True)),
                              **error_responses(401)})
    def list(self, request):
        """List your projects."""
        memberships = selectors.memberships_of(user=request.user)
        return Response({"projects": MembershipProjectOutput(memberships, many=True).data})

    @extend_schema(request=CreateProjectInput,
                   responses={201: envelope("ProjectCreated", project=ProjectOutput()), **error_responses(401, 422)})
    def create(self, request):
        """Create a project."""
        data = validated(CreateProjectInput, request.data)
        project = services.create_project(owner=request.user, **data)
        return Response({"project": ProjectOutput(project).data}, status=status.HTTP_201_CREATED)


class ProjectViewSet(ProjectScopedViewSet):
    required_roles = {"statuses": Role.VIEWER, "members": Role.VIEWER}

    @extend_schema(responses={200: envelope("StatusList", statuses=StatusOutput(many=True)),
                              **error_responses(401, 404)})
    def statuses(self, request, project_id):
        """List the project's statuses (columns)."""
        statuses = selectors.project_statuses(project=self.project)
        return Response({"statuses": StatusOutput(statuses, many=True).data})

    @extend_schema(responses={200: envelope("MemberList", members=MemberOutput(many=True)),
                              **error_responses(401, 404)})
    def members(self, request, project_id):
        """List the project's members."""
        members = selectors.project_members(project=self.project)
        return Response({"members": MemberOutput(members, many=True).data})


class TagViewSet(ProjectScopedViewSet):
    required_roles = {"list": Role.VIEWER, "create": Role.MANAGER, "destroy": Role.MANAGER}

    def find_object(self):
        if "tag_id" not in self.kwargs:
            return None  # the project's tag list
        return selectors.tag_in_project(project=self.project, tag_id=self.kwargs["tag_id"])

    @extend_schema(responses={200: envelope("TagList", tags=TagOutput(many=True)), **error_responses(401, 404)})
    def list(self, request, project_id):
        """List tags."""
        return Response({"tags": TagOutput(selectors.project_tags(project=self.project), many=True).data})

    @extend_schema(request=CreateTagInput,
                   responses={201: envelope("TagCreated", tag=TagOutput()), **error_responses(401, 403, 404, 422)})
    def create(self, request, project_id):
        """Create a tag."""
        data = validated(CreateTagInput, request.data)
        tag = services.create_tag(project=self.project, actor=request.user, **data)
        return Response({"tag": TagOutput(tag).data}, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={200: envelope("TagDeleted", ok=True), **error_responses(401, 403, 404)})
    def destroy(self, request, project_id, tag_id):
        """Delete a tag."""
        services.delete_tag(tag=self.object, actor=request.user)
        return Response({"ok": True})
