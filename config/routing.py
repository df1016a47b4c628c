from django.urls import path

import config.api.fields  # noqa: F401  (registers the <id:...> converter)
from tickets.consumers import BoardConsumer

websocket_urlpatterns = [
    path("ws/v1/projects/<id:project_id>/board/", BoardConsumer.as_asgi()),
]
