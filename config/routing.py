from django.urls import path

from tickets.consumers import BoardConsumer

websocket_urlpatterns = [
    path("ws/v1/projects/<int:project_id>/board/", BoardConsumer.as_asgi()),
]
