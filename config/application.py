"""The ASGI application: Django's HTTP stack and the websocket routes, behind the request id, /metrics and
the body limit. Servers load it through config/asgi.py, which also starts what a serving process runs beside
it; tests take it from here, without that.
"""

import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup(set_prefix=False)  # before importing consumers, as django.core.asgi.get_asgi_application() does

from config.handler import SyncStackASGIHandler  # noqa: E402

django_asgi_app = SyncStackASGIHandler()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from accounts.websocket import websocket_auth_stack  # noqa: E402
from config.routing import websocket_urlpatterns  # noqa: E402
from core.body_limit import BodySizeLimit  # noqa: E402
from core.live import ServingLoop  # noqa: E402
from core.metrics import MetricsEndpoint  # noqa: E402
from core.request_id import RequestIdMiddleware  # noqa: E402

application = RequestIdMiddleware(MetricsEndpoint(ProtocolTypeRouter(
    {
        "http": ServingLoop(BodySizeLimit(django_asgi_app)),
        "websocket": websocket_auth_stack(URLRouter(websocket_urlpatterns)),
    }
)))
