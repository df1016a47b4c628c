import uuid
from pathlib import PurePath

from django.conf import settings
from django.db import models


def stored_file_path(instance, filename: str) -> str:
    """A generated name: the uploaded name is kept for display only, never as a path."""
    return f"attachments/{uuid.uuid4().hex}{PurePath(filename).suffix.lower()[:10]}"


class StoredFile(models.Model):
    """An uploaded file that passed the upload policy (attachments.uploads), as tickets and docs keep them."""

    file = models.FileField(upload_to=stored_file_path, max_length=200)
    original_name = models.CharField(max_length=255)
    filesize = models.PositiveBigIntegerField()
    mime_type = models.CharField(max_length=100)
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return self.original_name
