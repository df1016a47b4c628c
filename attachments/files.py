"""The life of a stored file: written before its record commits, removed after its record is deleted,
copied for a duplicated record, and served back with headers that keep a browser from misreading it.

No database connection is held while a file goes to or comes from its storage (core.db.release_connection):
a bucket that hangs then holds the requests that wait on it, not the pool's connections that every other
request needs.
"""

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from urllib.parse import quote

from asgiref.sync import sync_to_async
from django.core.files import File
from django.db import transaction
from django.http import Http404, StreamingHttpResponse

from core.db import release_connection
from core.errors import Unavailable

from .models import StoredFile
from .storage import CHUNK_SIZE, Stream, bucket_reached, open_stream
from .uploads import INLINE_TYPES, Upload, display_name

logger = logging.getLogger(__name__)

# Served to a browser, a stored file may not load anything, run scripts or reach the API's origin.
# PDF is left out: browsers' PDF viewers refuse to open in a sandbox.
SANDBOX = "default-src 'none'; style-src 'unsafe-inline'; sandbox"


def records_for(model: type[StoredFile], uploads: Sequence[Upload], *, uploaded_by, **owner) -> list[StoredFile]:
    """Unsaved records of `model` for checked uploads; `owner` names what they are attached to."""
    return [model(original_name=upload.name, filesize=upload.file.size, mime_type=upload.mime_type,
                  uploaded_by=uploaded_by, **owner) for upload in uploads]


def store_then_commit(records: Sequence[StoredFile], contents: Iterable[File], commit: Callable[[], object]):
    """Write each record's file, then run `commit` (the transaction that saves the records): all or nothing.

    The files go to storage before the transaction, with no database connection held, so neither a lock
    nor a connection is held while up to 200 MB are written; whatever fails, the files already written are
    removed (as far as the storage lets: a bucket out of reach keeps them, and the log says which).
    """
    release_connection()
    try:
        with bucket_reached():
            for record, content in zip(records, contents, strict=True):
                # Stored under a generated name (stored_file_path); the uploaded one is kept for display only.
                record.file.save(record.original_name, content, save=False)
        with transaction.atomic():
            return commit()
    except BaseException:
        for record in records:
            remove_stored(record.file.storage, record.file.name)
        raise


def remove_stored(storage, name: str | None) -> None:
    """Remove a stored file; a storage out of reach leaves it, logged."""
    if not name:
        return
    try:
        with bucket_reached():
            storage.delete(name)
    except Unavailable:
        logger.warning("stored file %s left behind: its storage is out of reach", name)


def uploaded_contents(uploads: Sequence[Upload]) -> list[File]:
    return [upload.file for upload in uploads]


def copied_contents(records: Sequence[StoredFile]) -> Iterator[File]:
    """The stored files of `records`, for records that must own copies of their own (a duplicated article):
    each opened by its storage only when its copy is written, and closed once it is, so that a copy holds
    one file at a time, in chunks on the disk or at most FILE_UPLOAD_MAX_MEMORY_SIZE of it in a bucket's
    download (attachments.storage)."""
    for record in records:
        with record.file.storage.open(record.file.name) as source:
            yield source


def delete_file_on_commit(record: StoredFile) -> None:
    """The record goes in the current transaction, its file once that commits: a rollback keeps both."""
    storage, name = record.file.storage, record.file.name

    def delete_stored_file():  # a function: Django logs its __qualname__
        release_connection()
        remove_stored(storage, name)

    transaction.on_commit(delete_stored_file, robust=True)


def content_disposition(name: str, *, inline: bool) -> str:
    """An ASCII `filename` every client reads, and the exact name in `filename*` (RFC 5987) when it is not ASCII.

    Django's FileResponse(filename=...) sends only `filename*` for a name that is not ASCII, which
    older clients ignore; it also keeps line breaks and path parts this sanitizing drops.
    """
    name = display_name(name)
    ascii_name = "".join(char if char.isascii() else "_" for char in name)
    header = f'{"inline" if inline else "attachment"}; filename="{ascii_name}"'
    return header if ascii_name == name else f"{header}; filename*=UTF-8''{quote(name)}"


class StoredFileResponse(StreamingHttpResponse):
    """A stored file, sent as it is read from its storage, CHUNK_SIZE at a time.

    Django's FileResponse is read synchronously, which its ASGI handler does by reading the whole file into
    memory before the first byte goes out; under ASGI this one reads each chunk in a worker thread and
    sends it before reading the next, so a download holds a chunk, not a file, whatever its size.
    """

    def __init__(self, stream: Stream, **kwargs):
        super().__init__(iter(lambda: stream.read(CHUNK_SIZE), b""), **kwargs)
        self.stream = stream
        self._resource_closers.append(stream.close)
        self["Content-Length"] = str(stream.size)

    async def __aiter__(self):
        read = sync_to_async(self.stream.read, thread_sensitive=False)
        while chunk := await read(CHUNK_SIZE):
            yield chunk


def streamed(name: str, storage=None, **kwargs) -> StoredFileResponse:
    """The stored file `name`, streamed back (FileNotFoundError if absent; Unavailable when its bucket is out of
    reach). The request's database connection goes back to the pool first: the file may take long to come."""
    release_connection()
    return StoredFileResponse(open_stream(name, storage), **kwargs)


def download_response(record: StoredFile, *, private: bool = False) -> StoredFileResponse:
    """A stored file streamed back from wherever it is stored; `private` keeps shared caches from keeping it."""
    mime_type = record.mime_type
    try:
        # Text was checked to be UTF-8 on upload; naming the charset leaves a browser nothing to guess.
        response = streamed(record.file.name, record.file.storage,
                            content_type=f"{mime_type}; charset=utf-8" if mime_type.startswith("text/") else mime_type)
    except FileNotFoundError:  # deleted since its record was read: a deletion removes the file once it commits
        raise Http404(f"{record._meta.verbose_name} not found") from None
    response["Content-Disposition"] = content_disposition(record.original_name, inline=mime_type in INLINE_TYPES)
    response["X-Content-Type-Options"] = "nosniff"
    if mime_type != "application/pdf":
        response["Content-Security-Policy"] = SANDBOX
    if private:
        response["Cache-Control"] = "private"
    return response
