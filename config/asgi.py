import gc
import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup(set_prefix=False)  # before importing consumers, as django.core.asgi.get_asgi_application() does

from config.handler import SyncStackASGIHandler  # noqa: E402

django_asgi_app = SyncStackASGIHandler()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from accounts.websocket import websocket_auth_stack  # noqa: E402
from config.body_limit import BodySizeLimit  # noqa: E402
from config.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": BodySizeLimit(django_asgi_app),
        "websocket": websocket_auth_stack(URLRouter(websocket_urlpatterns)),
    }
)

# Everything loaded so far lives as long as the process: keep it out of the garbage collector's
# full scans, which otherwise stall requests that build many objects (big boards).
gc.freeze()

# A young collection runs every 700 allocations by default, and every tenth one also scans the middle
# generation: relaying one frame to the hundreds of viewers of a process ran them over and over (about
# 5 ms for each of the middle one), and the full scans they lead to walked every open socket's objects
# (25-130 ms each). Every 10,000 allocations instead: about 15% less server CPU per frame
# (bench/ws_fanout.py).
gc.set_threshold(10_000, 10, 10)
