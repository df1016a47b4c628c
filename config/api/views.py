"""Django-level error handlers: JSON for anything under /api/, Django's pages elsewhere."""

from django.http import JsonResponse
from django.views import defaults


def _is_api(request) -> bool:
    return request.path.startswith("/api/")


def not_found(request, exception=None):
    if _is_api(request):
        return JsonResponse({"error": "not found"}, status=404)
    return defaults.page_not_found(request, exception)


def server_error(request):
    if _is_api(request):
        return JsonResponse({"error": "internal server error"}, status=500)
    return defaults.server_error(request)


def bad_request(request, exception=None):
    if _is_api(request):
        return JsonResponse({"error": "bad request"}, status=400)
    return defaults.bad_request(request, exception)


def permission_denied(request, exception=None):
    if _is_api(request):
        return JsonResponse({"error": "permission denied"}, status=403)
    return defaults.permission_denied(request, exception)
