from django.urls import path

from . import pages

urlpatterns = [
    path("notifications/unread-count", pages.unread_count, name="notification-unread-count-page"),
]
