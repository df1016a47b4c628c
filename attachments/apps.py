from django.apps import AppConfig


class AttachmentsConfig(AppConfig):
    """Stored files: no table of its own, only the abstract model the apps with attachments subclass."""

    name = "attachments"
