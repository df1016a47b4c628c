"""How uploads and a stored file's download are described in the API reference."""

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, inline_serializer
from rest_framework import serializers

from .uploads import MAX_FILE_SIZE, TYPES

# The body of every upload route: what accepted_uploads() reads.
UPLOAD_REQUEST = {"multipart/form-data": inline_serializer("AttachmentUpload", {
    "files[]": serializers.ListField(
        child=serializers.FileField(), min_length=1, max_length=settings.DATA_UPLOAD_MAX_NUMBER_FILES, help_text=(
            f"One or more files, at most {settings.DATA_UPLOAD_MAX_NUMBER_FILES}, each at most "
            f"{MAX_FILE_SIZE // (1024 * 1024)} MB, of an accepted type whose content agrees with the extension. "
            "If one is refused, none is stored.")),
})}

# application/octet-stream first: it stands for "any of the types below", and is what client generators
# read as "return the bytes". The file itself comes with its own type.
DOWNLOAD_MEDIA_TYPES = ["application/octet-stream", *sorted({file_type.mime_type for file_type in TYPES.values()})]


def download_responses(description: str) -> dict:
    response = OpenApiResponse(OpenApiTypes.BINARY, description=description)
    return {(200, media_type): response for media_type in DOWNLOAD_MEDIA_TYPES}
