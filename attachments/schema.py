"""How a stored file's download is described in the API reference."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse

from .uploads import TYPES

# application/octet-stream first: it stands for "any of the types below", and is what client generators
# read as "return the bytes". The file itself comes with its own type.
DOWNLOAD_MEDIA_TYPES = ["application/octet-stream", *sorted({file_type.mime_type for file_type in TYPES.values()})]


def download_responses(description: str) -> dict:
    response = OpenApiResponse(OpenApiTypes.BINARY, description=description)
    return {(200, media_type): response for media_type in DOWNLOAD_MEDIA_TYPES}
