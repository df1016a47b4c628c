from django.urls import path

import core.api.fields  # noqa: F401  (registers the <id:...> converter)

from . import pages

urlpatterns = [
    path("projects/<id:project_id>/settings/", pages.settings, name="settings-page"),
]
