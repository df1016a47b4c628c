from django.urls import path

import core.api.fields  # noqa: F401  (registers the <id:...> converter)

from . import pages

urlpatterns = [
    path("projects/", pages.project_list, name="project-list-page"),
    path("projects/<id:project_id>/board/", pages.board, name="board-page"),
]
