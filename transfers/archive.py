"""A zip to import (our own export), opened only once it is known to be safe to read: not too many members,
not unpacking past IMPORT_MAX_UNPACKED_BYTES or IMPORT_MAX_ZIP_RATIO times its size (a zip bomb), and no
member whose path would leave the archive. Nothing is ever extracted to the disk: members are read as streams.
"""

import zipfile
from pathlib import Path, PurePosixPath

from django.conf import settings
from django.core.files import File

from attachments.uploads import ZIP_ERRORS, directory_entries_at_most

from .errors import TransferFailed

# zipfile holds an entry per member in memory once it opens an archive; an export holds one per stored file.
MAX_MEMBERS = 100_000


def open_archive(path: Path) -> zipfile.ZipFile:
    size = path.stat().st_size
    with path.open("rb") as raw:
        if directory_entries_at_most(File(raw)) > MAX_MEMBERS:
            raise TransferFailed(f"zip: more than {MAX_MEMBERS:,} members")
    try:
        archive = zipfile.ZipFile(path)
    except ZIP_ERRORS:
        raise TransferFailed("zip: not a readable zip archive") from None
    try:
        _check(archive, size)
    except TransferFailed:
        archive.close()
        raise
    return archive


def _check(archive: zipfile.ZipFile, size: int) -> None:
    unpacked = 0
    for info in archive.infolist():
        if not is_inside(info.filename):
            raise TransferFailed(f"zip: {info.filename[:200]!r}: a path that leaves the archive")
        unpacked += info.file_size
    limit = min(settings.IMPORT_MAX_UNPACKED_BYTES, settings.IMPORT_MAX_ZIP_RATIO * max(size, 1))
    if unpacked > limit:
        raise TransferFailed(f"zip: its members would unpack to {unpacked:,} bytes, more than the {limit:,} "
                             f"allowed for a zip of {size:,} bytes")


def is_inside(name: str) -> bool:
    """A relative path that stays within the archive: no root, drive, backslash, `..` or NUL."""
    if not name or "\\" in name or "\0" in name or ":" in name:
        return False
    path = PurePosixPath(name)
    return not path.is_absolute() and ".." not in path.parts
