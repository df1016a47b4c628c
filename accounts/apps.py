from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"

    def ready(self):
        from . import checks, schema  # noqa: F401  register a system check, and the bearer scheme with drf-spectacular
