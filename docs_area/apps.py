from django.apps import AppConfig


class DocsAreaConfig(AppConfig):
    name = "docs_area"
