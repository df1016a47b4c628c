from django.urls import path, re_path

import core.api.fields  # noqa: F401  (registers the <id:...> converter)
from notifications.consumers import NotificationConsumer
from tickets.consumers import BoardConsumer


async def unknown_socket(scope, receive, send):
    """Any other path, an id too large to exist included: refused like every handshake that reaches
    nothing (HTTP 403 from the server), not a routing error with a traceback."""
    await receive()  # websocket.connect
    await send({"type": "websocket.close"})


websocket_urlpatterns = [
    path("ws/v1/projects/<id:project_id>/board/", BoardConsumer.as_asgi()),
    path("ws/v1/notifications/", NotificationConsumer.as_asgi()),
    re_path(r"", unknown_socket),
]
