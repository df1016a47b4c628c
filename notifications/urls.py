from django.urls import path

from .views import NotificationViewSet

urlpatterns = [
    path("notifications", NotificationViewSet.as_view({"get": "list"}), name="notification-list"),
    path("notifications/unread-count", NotificationViewSet.as_view({"get": "unread_count"}),
         name="notification-unread-count"),
    path("notifications/mark-read-for-ticket", NotificationViewSet.as_view({"post": "mark_read_for_ticket"}),
         name="notification-mark-read-for-ticket"),
    path("notifications/mark-all-read", NotificationViewSet.as_view({"post": "mark_all_read"}),
         name="notification-mark-all-read"),
]
