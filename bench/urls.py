import os

from django.http import JsonResponse
from django.urls import include, path


def trivial(request):
    return JsonResponse({"ok": True, "pid": os.getpid()})  # the pid: bench/load.py spreads its connections


urlpatterns = [path("bench/trivial", trivial), path("", include("config.urls"))]
