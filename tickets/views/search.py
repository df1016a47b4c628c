"""Searching a project's tickets."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from core.api.inputs import validated
from core.api.schema import envelope, error_responses
from projects.roles import Role
from projects.views import ProjectScopedViewSet

from ..search import SEARCH_LIMIT, TOTAL_CAP, search_tickets
from ..serializers import SearchResultOutput, TicketSearchInput, search_shapes


class TicketSearchViewSet(ProjectScopedViewSet):
    """Case-insensitive search over the chosen fields; `42` or `APL-42` also finds ticket 42 (listed first),
    then title hits come first, then the others, most recently updated first. Deleted tickets never appear."""

    required_roles = {"search": Role.VIEWER}
    query_parameters = {"search": TicketSearchInput}

    @extend_schema(parameters=[TicketSearchInput], responses={
        200: envelope("TicketSearchResults", tickets=SearchResultOutput(many=True),
                      total=serializers.IntegerField(help_text=(
                          "How many tickets match, beyond the limit too; a lower bound when total_capped")),
                      limit=serializers.IntegerField(help_text=f"At most {SEARCH_LIMIT} tickets are returned"),
                      total_capped=serializers.BooleanField(help_text=(
                          f"Extension. true when more than {TOTAL_CAP} tickets match in one of the searched fields: "
                          "they were not all counted, and total is the number counted (at least that many "
                          "match). The tickets returned are the first ones either way."))),
        **error_responses(401, 404, 422)})
    def search(self, request, project_id):
        """Search tickets."""
        params = validated(TicketSearchInput, request.query_params, project=self.project)
        result = search_tickets(project=self.project, query=params["q"], fields=params["in[]"],
                                statuses=params["status[]"], include_archived=params["archived"] == 1)
        return Response({"tickets": search_shapes(result), "total": result.total,
                         "limit": SEARCH_LIMIT, "total_capped": result.total_capped})
