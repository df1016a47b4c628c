from django.urls import path

from . import pages

urlpatterns = [
    path("unsubscribe/<str:token>/", pages.unsubscribe, name="unsubscribe"),
]
