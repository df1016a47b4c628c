from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from core.api.base import ApiViewSet
from core.api.inputs import validated
from core.api.schema import envelope, error_responses
from core.ratelimit import client_bucket

from . import services
from .serializers import MeOutput, UpdateMeInput

ME = envelope("Me", user=MeOutput())


class MeViewSet(ApiViewSet):
    """The caller's own account."""

    @extend_schema(responses={200: ME, **error_responses(401)})
    def show(self, request):
        """Show your account."""
        return Response({"user": MeOutput(request.user).data})

    @extend_schema(description="Changing `email` needs `current_password` (422 naming it when missing or wrong; "
                               "wrong ones count as failed logins, and lock it as the login page does).",
                   request=UpdateMeInput, responses={200: ME, **error_responses(401, 422)})
    def update(self, request):
        """Change your name, e-mail address or e-mail notifications."""
        changes = validated(UpdateMeInput, request.data)
        user = services.update_profile(user=request.user, address=client_bucket(request), **changes)
        return Response({"user": MeOutput(user).data})
