from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"

    def ready(self) -> None:
        from . import readiness  # noqa: F401  (registers the deploy checks)
