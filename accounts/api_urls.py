from django.urls import path

from .api_views import MeViewSet

urlpatterns = [
    path("me", MeViewSet.as_view({"get": "show"}), name="me"),
    path("me/update", MeViewSet.as_view({"post": "update"}), name="me-update"),
]
