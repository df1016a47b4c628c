from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from core.api.inputs import validated
from core.api.schema import error_responses
from core.time import timestamp
from projects.roles import Role
from projects.views import ProjectScopedViewSet

from . import selectors
from .serializers import EventFeedInput, EventFeedOutput


class EventFeedViewSet(ProjectScopedViewSet):
    """The project's event log for clients that poll instead of holding the board socket."""

    required_roles = {"list": Role.VIEWER}
    query_parameters = {"list": EventFeedInput}

    @extend_schema(parameters=[EventFeedInput], responses={200: EventFeedOutput, **error_responses(401, 404, 422)})
    def list(self, request, project_id):
        """List the project's events after a seq, oldest first."""
        query = validated(EventFeedInput, request.query_params)
        # One row past the page tells whether there is more, without a count.
        rows = list(selectors.events_after(project_id=self.project.pk, after=query["after"], limit=query["limit"] + 1))
        page = rows[:query["limit"]]
        return Response({
            "events": [{**selectors.kept_frame(row.payload, row.created_at), "created_at": timestamp(row.created_at)}
                       for row in page],
            "next_after": page[-1].seq if page else query["after"],
            "has_more": len(rows) > query["limit"],
        })
