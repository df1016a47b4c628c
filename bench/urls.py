from django.http import JsonResponse
from django.urls import include, path


def trivial(request):
    return JsonResponse({"ok": True})


urlpatterns = [path("bench/trivial", trivial), path("", include("config.urls"))]
