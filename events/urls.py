from django.urls import path

from .views import EventFeedViewSet

urlpatterns = [
    path("projects/<id:project_id>/events", EventFeedViewSet.as_view({"get": "list"}), name="project-events"),
]
