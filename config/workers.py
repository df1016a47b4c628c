"""The gunicorn worker class of the Procfile's `web:` line."""

from uvicorn_worker import UvicornWorker


class Worker(UvicornWorker):
    """uvicorn's worker without websocket compression (permessage-deflate).

    A board frame is a small JSON object sent to every viewer: compressing it costs each connection
    its own zlib state (about 35 KiB, kept for the socket's life: 72 → 38 KiB per connection in the
    fan-out benchmark) and a compression per viewer per frame, to save little on frames this small.
    """

    CONFIG_KWARGS = {**UvicornWorker.CONFIG_KWARGS, "ws_per_message_deflate": False}
