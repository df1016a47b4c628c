from django.urls import path

from . import pages

urlpatterns = [
    path("projects/", pages.project_list, name="project-list-page"),
    path("projects/<int:project_id>/board/", pages.board, name="board-page"),
    path("projects/<int:project_id>/board/data", pages.board_data, name="board-page-data"),
]
