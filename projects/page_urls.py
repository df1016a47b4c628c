from django.urls import path

import core.api.fields  # noqa: F401  (registers the <id:...> converter)
from accounts.lockout import rate_limited_login

from . import pages

urlpatterns = [
    path("projects/<id:project_id>/settings/", pages.settings, name="settings-page"),
    path("invitations/<str:token>/", rate_limited_login(pages.invitation, counts=pages.signs_in),
         name="invitation-page"),
]
