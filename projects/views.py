from collections.abc import Callable
from functools import cached_property
from operator import attrgetter

from django.http import Http404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from attachments.uploads import upload_body_max_size
from core.api.base import ApiViewSet
from core.api.inputs import validated
from core.api.schema import ErrorOutput, envelope, error_responses
from core.errors import LockFirst
from core.queries import Read, rows_together

from . import selectors, services
from .models import Membership
from .permissions import HasProjectRole, Rule
from .roles import Role
from .serializers import (
    CreateProjectInput,
    CreateStatusInput,
    InvitationOutput,
    InviteInput,
    MemberOutput,
    MembershipProjectOutput,
    ProjectOutput,
    SortStatusesInput,
    StatusOutput,
    UpdateMemberInput,
    UpdateProjectInput,
    UpdateStatusInput,
)

PROJECT = envelope("ProjectDetail", project=MembershipProjectOutput())
STATUS = envelope("StatusDetail", status=StatusOutput())
WRITE_ERRORS = error_responses(401, 403, 404, 422)
PENDING = ("An invitation to this address is pending, or a member has it (or a request with the same "
           "`Idempotency-Key` is still being served: retry after `Retry-After` seconds)")


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
    the membership's lookup (a ticket and its parts by their number). For its `locked_actions`, writes to
    what the URL names, all of that is loaded in the write's transaction (opened here, ended once the handler
    answers) and the object under its lock: the write then reads nothing of it again.
    """

    permission_classes = [IsAuthenticated, HasProjectRole]
    required_roles: dict[str, Rule] = {}
    # How the project is reached from the object, for URLs without {project_id} (e.g. "ticket.project_id").
    project_of: str | None = None
    not_found_message = "project not found"
    locked_actions: frozenset[str] = frozenset()
    # What a write asked to have locked before anything else (core.errors.LockFirst), when it runs again.
    lock_first: Callable[[], object] | None = None

    @property
    def locks_object(self) -> bool:
        return self.action in self.locked_actions

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
        if self.locks_object:
            self.open_write_transaction()
            if self.lock_first is not None:
                self.lock_first()
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

    def handle_exception(self, exc):
        if isinstance(exc, LockFirst) and self.in_write_transaction and self.lock_first is None:
            return self._run_again(locking_first=exc.lock)
        return super().handle_exception(exc)

    def _run_again(self, *, locking_first: Callable[[], object]):
        """The request's checks and handler once more, in a new transaction that takes `locking_first` before
        loading anything: what was loaded, and written, in the first one is rolled back and forgotten."""
        self.roll_back_write_transaction()
        for klass in type(self).__mro__:
            for name, attribute in vars(klass).items():
                if isinstance(attribute, cached_property):
                    self.__dict__.pop(name, None)
        self.lock_first = locking_first
        try:
            self.check_permissions(self.request)
            return getattr(self, self.action)(self.request, *self.args, **self.kwargs)
        except Exception as exc:
            return self.handle_exception(exc)

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
    required_roles = {"retrieve": Role.VIEWER, "update": Role.MANAGER}

    @extend_schema(responses={200: PROJECT, **error_responses(401, 404)})
    def retrieve(self, request, project_id):
        """Get a project, as the list shows it."""
        return Response({"project": MembershipProjectOutput(self.membership).data})

    @extend_schema(description="Send only what changes: `name`, `prefix` (stored upper-case; the tickets' "
                               "references follow it), `description`, `docs_enabled`, `estimation_mode`. Managers.",
                   request=UpdateProjectInput, responses={200: PROJECT, **WRITE_ERRORS})
    def update(self, request, project_id):
        """Change a project's settings."""
        changes = validated(UpdateProjectInput, request.data)
        services.update_project(project=self.project, **changes)
        return Response({"project": MembershipProjectOutput(self.membership).data})


class StatusViewSet(ProjectScopedViewSet):
    """The project's statuses: the board's columns, in order. Named in paths by their slug, which never changes."""

    required_roles = {"statuses": Role.VIEWER, "create_status": Role.MANAGER, "update_status": Role.MANAGER,
                      "delete_status": Role.MANAGER, "sort_statuses": Role.MANAGER}

    def find_object(self):
        if "slug" not in self.kwargs:
            return None
        return selectors.status_in_project(project=self.project, slug=self.kwargs["slug"])

    @extend_schema(responses={200: envelope("StatusList", statuses=StatusOutput(many=True)),
                              **error_responses(401, 404)})
    def statuses(self, request, project_id):
        """List the project's statuses (columns)."""
        statuses = selectors.project_statuses(project=self.project)
        return Response({"statuses": StatusOutput(statuses, many=True).data})

    @extend_schema(description="A new column at the end of the board. `slug` is derived from the label when "
                               "omitted (`in_review`, then `in_review_2`, …); a slug the project has: 422.",
                   request=CreateStatusInput, responses={201: STATUS, **WRITE_ERRORS})
    def create_status(self, request, project_id):
        """Add a status."""
        data = validated(CreateStatusInput, request.data)
        status_ = services.create_status(project=self.project, actor=request.user, **data)
        return Response({"status": StatusOutput(status_).data}, status=status.HTTP_201_CREATED)

    @extend_schema(description="Send only what changes. A hidden column stays on the board payload with "
                               "`hidden: true`; the board page leaves it out.",
                   request=UpdateStatusInput, responses={200: STATUS, **WRITE_ERRORS})
    def update_status(self, request, project_id, slug):
        """Change a status."""
        changes = validated(UpdateStatusInput, request.data)
        status_ = services.update_status(status=self.object, actor=request.user, **changes)
        return Response({"status": StatusOutput(status_).data})

    @extend_schema(description="Only a status no ticket is in (on the board or archived), and never the last "
                               "one: otherwise 422.",
                   request=None, responses={200: envelope("StatusDeleted", ok=True), **WRITE_ERRORS})
    def delete_status(self, request, project_id, slug):
        """Delete an empty status."""
        services.delete_status(status=self.object, actor=request.user)
        return Response({"ok": True})

    @extend_schema(description="`slugs` must list every status of the project exactly once; otherwise 422.",
                   request=SortStatusesInput, responses={200: envelope("StatusesSorted", ok=True), **WRITE_ERRORS})
    def sort_statuses(self, request, project_id):
        """Reorder the statuses."""
        slugs = validated(SortStatusesInput, request.data)["slugs"]
        services.sort_statuses(project=self.project, slugs=slugs, actor=request.user)
        return Response({"ok": True})


class MemberViewSet(ProjectScopedViewSet):
    """The project's members: listed for everyone, their roles changed and removed by managers."""

    required_roles = {"members": Role.VIEWER, "update_member": Role.MANAGER, "remove_member": Role.MANAGER}

    def find_object(self):
        if "user_id" not in self.kwargs:
            return None
        return selectors.member_of_project(project=self.project, user_id=self.kwargs["user_id"])

    @extend_schema(responses={200: envelope("MemberList", members=MemberOutput(many=True)),
                              **error_responses(401, 404)})
    def members(self, request, project_id):
        """List the project's members."""
        members = selectors.project_members(project=self.project)
        return Response({"members": MemberOutput(members, many=True).data})

    @extend_schema(description="The project's owner stays a manager (422). Not a removal: the member's open "
                               "boards stay open.",
                   request=UpdateMemberInput,
                   responses={200: envelope("MemberUpdated", member=MemberOutput()), **WRITE_ERRORS})
    def update_member(self, request, project_id, user_id):
        """Change a member's role."""
        role = validated(UpdateMemberInput, request.data)["role"]
        membership = services.change_member_role(membership=self.object, role=Role(role))
        return Response({"member": MemberOutput(membership).data})

    @extend_schema(description="Their open boards of this project close at once (code 4403). The project's owner "
                               "cannot be removed (422).",
                   request=None, responses={200: envelope("MemberRemoved", ok=True), **WRITE_ERRORS})
    def remove_member(self, request, project_id, user_id):
        """Remove a member from the project."""
        services.remove_membership(membership=self.object)
        return Response({"ok": True})


class InvitationViewSet(ProjectScopedViewSet):
    """Invitations by e-mail to join the project with a role: sent, listed while pending and revoked by managers."""

    required_roles = {"invitations": Role.MANAGER, "invite": Role.MANAGER, "revoke": Role.MANAGER}
    schema_noun = "invitation"

    @property
    def project_of(self) -> str | None:
        # A route naming an invitation reaches its project through it: for a non-member, the same 404.
        return "project_id" if "invitation_id" in self.kwargs else None

    @property
    def not_found_message(self) -> str:
        return "invitation not found" if "invitation_id" in self.kwargs else "project not found"

    def find_object(self):
        if "invitation_id" not in self.kwargs:
            return None
        return selectors.invitation(invitation_id=self.kwargs["invitation_id"])

    @extend_schema(responses={200: envelope("InvitationList", invitations=InvitationOutput(many=True)),
                              **error_responses(401, 403, 404)})
    def invitations(self, request, project_id):
        """List the project's pending invitations."""
        invitations = selectors.pending_invitations(project=self.project)
        return Response({"invitations": InvitationOutput(invitations, many=True).data})

    @extend_schema(description="Sends the address an e-mail with a link to join the project with `role`, valid 7 "
                               "days and usable once. An invitation to that address still pending, or a member "
                               "with it: 409.",
                   request=InviteInput,
                   responses={201: envelope("InvitationCreated", invitation=InvitationOutput()), **WRITE_ERRORS,
                              409: OpenApiResponse(ErrorOutput, description=PENDING)})
    def invite(self, request, project_id):
        """Invite someone by e-mail."""
        data = validated(InviteInput, request.data)
        invitation = services.invite(project=self.project, email=data["email"], role=Role(data["role"]),
                                     invited_by=request.user)
        return Response({"invitation": InvitationOutput(invitation).data}, status=status.HTTP_201_CREATED)

    @extend_schema(description="Its link stops working. An accepted invitation cannot be revoked (422).",
                   request=None, responses={200: envelope("InvitationRevoked", success=True), **WRITE_ERRORS})
    def revoke(self, request, invitation_id):
        """Revoke an invitation."""
        services.revoke_invitation(invitation=self.object)
        return Response({"success": True})
