from django.conf import settings
from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from attachments.files import streamed
from attachments.uploads import MULTIPART_OVERHEAD
from core.api.base import ApiViewSet
from core.api.inputs import validated
from core.api.schema import ErrorOutput, envelope, error_responses
from projects.permissions import DENIED
from projects.roles import Role
from projects.selectors import membership_for
from projects.views import ProjectScopedViewSet

from . import selectors, services
from .exporter import download_name
from .formats import check_format
from .models import Job, JobKind, JobStatus
from .serializers import ImportInput, JobOutput

JOB = envelope("JobEnvelope", job=JobOutput())
IMPORT_REQUEST = {"multipart/form-data": ImportInput}


class Conflict(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_code = "conflict"


class TooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "payload_too_large"


def _started(request, job: Job) -> Response:
    return Response({"job": JobOutput(job, context={"request": request}).data}, status=status.HTTP_202_ACCEPTED)


class ProjectExportViewSet(ProjectScopedViewSet):
    required_roles = {"create": Role.MANAGER}
    schema_noun = "export"

    @extend_schema(
        description="Start an export of the whole project (its managers): the job's `download_url` gives the zip "
                    "once it succeeded.", request=None,
        responses={202: JOB, **error_responses(401, 403, 404)})
    def create(self, request, project_id):
        """Export a project"""
        return _started(request, services.start_export(project=self.project, actor=request.user))


class ImportViewSet(ApiViewSet):
    permission_classes = [IsAuthenticated]
    upload_actions = frozenset({"create"})
    schema_noun = "import"

    @classmethod
    def largest_upload(cls) -> int:
        return settings.IMPORT_MAX_BYTES + MULTIPART_OVERHEAD

    @extend_schema(
        description="Start an import of a file of `source`'s format into the project `project_id` (you manage "
                    "it) or into a new project named `name` (yours). A file plainly not of that format is a 422 "
                    "at once; anything else wrong in it fails the job, whose `error` says where. An upload over "
                    "IMPORT_MAX_BYTES is a 413 before it is read.",
        request=IMPORT_REQUEST, responses={202: JOB, **error_responses(401, 403, 404, 413, 422)})
    def create(self, request):
        """Import a file"""
        data = validated(ImportInput, request.data)
        if data["file"].size > settings.IMPORT_MAX_BYTES:
            raise TooLarge(f"file: larger than {settings.IMPORT_MAX_BYTES:,} bytes")
        project = None
        if "project_id" in data:
            membership = membership_for(user=request.user, project_id=data["project_id"])
            if not membership.has_role(Role.MANAGER):
                raise exceptions.PermissionDenied(DENIED)
            project = membership.project
        check_format(data["source"], data["file"])
        job = services.start_import(actor=request.user, source=data["source"], file=data["file"], project=project,
                                    name=data.get("name", ""), prefix=data.get("prefix", ""))
        return _started(request, job)


class JobViewSet(ApiViewSet):
    permission_classes = [IsAuthenticated]
    schema_noun = "job"

    def perform_content_negotiation(self, request, force=False):
        # The download serves any client, whatever its Accept header; an error is still JSON.
        return super().perform_content_negotiation(request, force=True)

    @extend_schema(description="Whoever started the job, or a manager of its project; others 404.",
                   responses={200: JOB, **error_responses(401, 404)})
    def retrieve(self, request, job_id):
        """Get a job"""
        job = selectors.job_for(user=request.user, job_id=job_id)
        return Response({"job": JobOutput(job, context={"request": request}).data})

    @extend_schema(
        description="The zip of a succeeded export, streamed: `project.json`, `attachments/…` and `tickets.csv`. "
                    "409 while the export runs, when it failed, for an import, or once its zip expired.",
        # application/octet-stream first, as for every download: what client generators read as "the bytes".
        responses={**{(200, media_type): OpenApiResponse(OpenApiTypes.BINARY, description="The export")
                      for media_type in ("application/octet-stream", "application/zip")},
                   **error_responses(401, 404),
                   409: OpenApiResponse(ErrorOutput, description="Not a succeeded export (or its zip expired)")})
    def download(self, request, job_id):
        """Download an export"""
        job = selectors.job_for(user=request.user, job_id=job_id)
        if job.kind != JobKind.EXPORT or job.status != JobStatus.SUCCEEDED:
            raise Conflict(f"job {job.pk} is not a succeeded export (it is a {job.status} {job.kind})")
        if not job.result:
            raise Conflict(f"export {job.pk} expired: start a new one")
        try:
            response = streamed(job.result, content_type="application/zip")
        except FileNotFoundError:
            raise Http404("export not found") from None
        response["Content-Disposition"] = f'attachment; filename="{download_name(job.project, job)}"'
        response["X-Content-Type-Options"] = "nosniff"
        return response

