from importlib import import_module

from django.conf import settings
from django.core.checks import Error, register


@register()
def sessions_live_in_the_database(app_configs, **kwargs) -> list[Error]:
    """Open websockets of browser sessions are rechecked against the session table (accounts.consumers)."""
    store = import_module(settings.SESSION_ENGINE).SessionStore
    if hasattr(store, "get_model_class"):
        return []
    return [Error(f"SESSION_ENGINE {settings.SESSION_ENGINE!r} keeps no session table: the websockets of browser "
                  "sessions are rechecked against one", hint="Use django.contrib.sessions.backends.db or cached_db.",
                  id="accounts.E001")]
