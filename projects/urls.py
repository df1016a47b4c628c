from django.urls import path

from .views import ProjectCollectionViewSet, ProjectViewSet

urlpatterns = [
    path("projects", ProjectCollectionViewSet.as_view({"get": "list", "post": "create"}), name="project-list"),
    path("projects/<id:project_id>", ProjectViewSet.as_view({"get": "retrieve"}), name="project-detail"),
    path("projects/<id:project_id>/statuses", ProjectViewSet.as_view({"get": "statuses"}), name="project-statuses"),
    path("projects/<id:project_id>/members", ProjectViewSet.as_view({"get": "members"}), name="project-members"),
]
