from django.urls import path

from .views import ProjectCollectionViewSet, ProjectViewSet, TagViewSet

urlpatterns = [
    path("projects", ProjectCollectionViewSet.as_view({"get": "list", "post": "create"}), name="project-list"),
    path("projects/<id:project_id>/statuses", ProjectViewSet.as_view({"get": "statuses"}), name="project-statuses"),
    path("projects/<id:project_id>/members", ProjectViewSet.as_view({"get": "members"}), name="project-members"),
    path("projects/<id:project_id>/tags", TagViewSet.as_view({"get": "list", "post": "create"}), name="tag-list"),
    path("projects/<id:project_id>/tags/<id:tag_id>/delete", TagViewSet.as_view({"post": "destroy"}),
         name="tag-delete"),
]
