"""The header badge's session route: what the page reads again after its socket reconnects."""

from django.http import JsonResponse
from django.views.decorators.http import require_GET

from . import selectors


@require_GET
def unread_count(request):
    """GET /api/v1/notifications/unread-count for the page's own session: JSON, 401 without one."""
    if not request.user.is_authenticated:
        return JsonResponse({"error": "log in first"}, status=401)
    return JsonResponse({"count": selectors.unread_count(user=request.user)})
