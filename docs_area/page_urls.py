from django.urls import path

from . import pages

urlpatterns = [
    path("projects/<int:project_id>/docs/", pages.docs_home, name="docs-page"),
    path("projects/<int:project_id>/docs/articles/<int:article_id>/", pages.article_page, name="docs-article-page"),
]
