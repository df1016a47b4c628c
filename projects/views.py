from functools import cached_property
from operator import attrgetter

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from attachments.uploads import upload_body_max_size
from core.api.base import ApiViewSet
from core.api.inputs import validated
from core.api.schema import envelope, error_responses
from core.queries import Read, rows_together

from . import selectors, services
from .models import Membership
from .permissions import HasProjectRole, Rule
from .roles import Role
from .serializers import (
    CreateProjectInput,
    MemberOutput,
    MembershipProjectOutput,
    ProjectOutput,
    StatusOutput,
)


class ProjectScopedViewSet(ApiViewSet):
    """Base of every view that works inside one project, and of those whose URL names an object of one.

    Before any handler runs the request is resolved in this order: the caller (401, authentication); the
    rate limit (429); what the handler needs, loaded here whatever the route (through HasProjectRole): the
    caller's membership of the project and the object the URL names (404 for either, worded alike so
    nobody can tell that an id of someone else's project exists); the view's role table (403). The
    handler then only validates its body (422) and calls a service.

    A view declares what to load: `find_object()` for the object its URL names, `project_of` when the
    project is reached through that object rather than `{project_id}` in the URL, and
    `reads_with_membership()` for reads keyed by the URL alone that should travel in the round trip of
    the membership's lookup (a ticket and its parts by their number).
    """

    permission_classes = [IsAuthenticated, HasProjectRole]
    required_roles: dict[str, Rule] = {}
    # How the project is reached from the object, for URLs without {project_id} (e.g. "ticket.project_id").
    project_of: str | None = None
    not_found_message = "project not found"

    def find_object(self):
        """The object the URL names (raising Http404 when there is none), or None for project-wide routes."""
        return None

    @cached_property
    def object(self):
        return self.find_object()

    def reads_with_membership(self) -> list[Read]:
        """Reads keyed by the URL alone, sent with the membership's lookup (views with {project_id} only);
        their rows are `rows_read_with_membership`, to be looked at once the membership is found."""
        return []

    @cached_property
    def _membership_and_reads(self) -> list[list[tuple]]:
        project_id = (self.kwargs["project_id"] if self.project_of is None
                      else attrgetter(self.project_of)(self.object))
        return rows_together(selectors.membership_with_project.call(user=self.request.user.pk, project=project_id),
                             *self.reads_with_membership())

    @property
    def rows_read_with_membership(self) -> list[list[tuple]]:
        return self._membership_and_reads[1:]

    @cached_property
    def membership(self) -> Membership:
        membership = selectors.membership_with_project.instance(self._membership_and_reads[0])
        if membership is None:
            raise Http404(self.not_found_message)
        return membership

    @property
    def project(self):
        return self.membership.project

    @classmethod
    def largest_upload(cls) -> int:
        return upload_body_max_size()


class ProjectCollectionViewSet(ApiViewSet):
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
    required_roles = {"retrieve": Role.VIEWER, "statuses": Role.VIEWER, "members": Role.VIEWER}

    @extend_schema(responses={200: envelope("ProjectDetail", project=MembershipProjectOutput()),
                              **error_responses(401, 404)})
    def retrieve(self, request, project_id):
        """Get a project, as the list shows it."""
        return Response({"project": MembershipProjectOutput(self.membership).data})

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
