from django.urls import path

from notifications.consumers import NotificationConsumer
from tickets.consumers import BoardConsumer

websocket_urlpatterns = [
    path("ws/v1/projects/<int:project_id>/board/", BoardConsumer.as_asgi()),
    path("ws/v1/notifications/", NotificationConsumer.as_asgi()),
]
