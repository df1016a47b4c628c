from django.urls import path

from .views import ProjectTicketsViewSet

urlpatterns = [
    path("projects/<int:project_id>/stats", ProjectTicketsViewSet.as_view({"get": "stats"}), name="project-stats"),
]
