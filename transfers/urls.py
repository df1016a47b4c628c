from django.urls import path

from .views import ImportViewSet, JobViewSet, ProjectExportViewSet

urlpatterns = [
    path("projects/<id:project_id>/exports", ProjectExportViewSet.as_view({"post": "create"}), name="project-export"),
    path("imports", ImportViewSet.as_view({"post": "create"}), name="import-create"),
    path("jobs/<id:job_id>", JobViewSet.as_view({"get": "retrieve"}), name="job-detail"),
    path("jobs/<id:job_id>/download", JobViewSet.as_view({"get": "download"}), name="job-download"),
]
