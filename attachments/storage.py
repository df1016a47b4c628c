"""Where stored files live: MEDIA_ROOT on the local disk, or an S3-compatible bucket when
AWS_STORAGE_BUCKET_NAME is set (decisions.md, "Storage on S3-compatible servers"; config/settings.py).

Everything goes through Django's storage API. What it does not do well enough is done here: one S3 client
per process, time limits on every call to the bucket (a bucket that hangs answers 503, not a minute later),
reading a file as a stream (django-storages' S3 file downloads the whole object into memory before its
first read), and carrying every stored file in and out of a backup.

Of django-storages, only what a subclass is meant to use: `get_default_settings` (BaseStorage's hook for a
subclass's defaults), the `connection` property, and `S3File.obj` (the boto3 object behind an opened file, an
attribute it does not document). Of boto3, one undocumented use: a resource built around an existing client
(`ServiceResource(client=...)`, as its factory builds them). tests/attachments/test_bucket.py fails by name
when an upgrade takes either away.
"""

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import ClientError, HTTPClientError
from botocore.exceptions import ConnectionError as BucketConnectionError
from django.apps import apps
from django.conf import settings
from django.core.files import File
from django.core.files.storage import default_storage
from storages.backends.s3 import S3File, S3Storage

from core.errors import Unavailable

from .models import StoredFile

CHUNK_SIZE = 64 * 1024
SINGLE_PUT_MAX_SIZE = 64 * 1024 * 1024
OUT_OF_REACH = "the file storage is out of reach, try again shortly"


class BucketStorage(S3Storage):
    """django-storages' S3 backend with one S3 client per process, and time limits on every call.

    The backend builds a connection (a boto3 resource, its client and that client's pool of HTTP
    connections) per thread, and requests run in many threads (config/handler.py): each would build a
    session (about 80 ms of CPU) and open new connections to the bucket. Here the client, which boto3 makes
    safe to share between threads, is built once, by the backend with every setting of ours; each thread
    gets a resource of its own around it (resources are not to be shared, boto3 says).

    A call to the bucket gives up after AWS_S3_CONNECT_TIMEOUT to connect or AWS_S3_READ_TIMEOUT waiting
    for bytes (botocore's default is a minute each), and is tried twice at most: a hung bucket held each
    download's request, database connection included, for about 62 s.
    """

    def __init__(self, **settings):
        super().__init__(**settings)
        self._first_lock = threading.Lock()
        self._first = None
        self._per_thread = threading.local()

    def get_default_settings(self) -> dict:
        defaults = super().get_default_settings()
        # A multipart upload reads each part into memory, several at once (two copies of a 9.5 MB file:
        # about 70 MiB of peak memory for an upload request of 16); a single PUT streams the file from the
        # upload's temporary file. Every stored file fits one PUT (at most MAX_FILE_SIZE).
        defaults["transfer_config"] = defaults["transfer_config"] or TransferConfig(
            multipart_threshold=SINGLE_PUT_MAX_SIZE, use_threads=defaults["use_threads"])
        # A file opened through the storage (an article's copy reads its source so) is downloaded whole
        # before its first read, into memory unless this is set: past it, into a temporary file.
        defaults["max_memory_size"] = defaults["max_memory_size"] or settings.FILE_UPLOAD_MAX_MEMORY_SIZE
        # The operator's AWS_S3_CLIENT_CONFIG, if any, wins over these limits (botocore merges what was set).
        configured = defaults["client_config"] or Config(
            s3={"addressing_style": defaults["addressing_style"]}, signature_version=defaults["signature_version"],
            proxies=defaults["proxies"])
        defaults["client_config"] = Config(
            connect_timeout=settings.AWS_S3_CONNECT_TIMEOUT, read_timeout=settings.AWS_S3_READ_TIMEOUT,
            retries={"mode": "standard", "total_max_attempts": 2}).merge(configured)
        return defaults

    @property
    def connection(self):
        resource = getattr(self._per_thread, "resource", None)
        if resource is None:
            with self._first_lock:
                if self._first is None:
                    self._first = super().connection
            resource = self._per_thread.resource = type(self._first)(client=self._first.meta.client)
        return resource


@contextmanager
def bucket_reached():
    """Around calls to the storage: a bucket that refuses connections, does not answer within its time limits
    or fails on its side (5xx) raises Unavailable (core.errors: the API answers 503 with Retry-After). Local
    disks raise nothing of the kind."""
    try:
        yield
    except (BucketConnectionError, HTTPClientError) as error:
        raise Unavailable(OUT_OF_REACH) from error
    except ClientError as error:
        if error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) >= 500:
            raise Unavailable(OUT_OF_REACH) from error
        raise


class Stream:
    """A stored file open for reading in chunks, with its size: `read(n)` and `close()`."""

    def __init__(self, raw, size: int):
        self.raw, self.size = raw, size

    def read(self, size: int = CHUNK_SIZE) -> bytes:
        return self.raw.read(size)

    def close(self) -> None:
        self.raw.close()


def open_stream(name: str, storage=None) -> Stream:
    """The stored file `name`, read from where it lives as it is consumed (FileNotFoundError if absent;
    Unavailable when its bucket is out of reach)."""
    storage = storage or default_storage
    with bucket_reached():
        opened = storage.open(name, "rb")
        if isinstance(opened, S3File):
            # The object's body as the bucket sends it, rather than the whole object fetched before the first read.
            answer = opened.obj.get()
            return Stream(answer["Body"], answer["ContentLength"])
    return Stream(opened, opened.size)


def chunks_of(name: str, storage=None) -> Iterator[bytes]:
    stream = open_stream(name, storage)
    try:
        while chunk := stream.read(CHUNK_SIZE):
            yield chunk
    finally:
        stream.close()


def stored_names() -> Iterator[str]:
    """The names of every stored file the database refers to, whatever model keeps it."""
    for model in apps.get_models():
        if issubclass(model, StoredFile):
            yield from model._base_manager.order_by("pk").values_list("file", flat=True).iterator()


def export_files(names: Iterable[str], directory: Path) -> list[str]:
    """Copies each stored file to `directory`/name, in chunks; the names of those that were not there."""
    missing = []
    for name in names:
        target = directory / PurePosixPath(name)
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            with target.open("wb") as copy:
                for chunk in chunks_of(name):
                    copy.write(chunk)
        except FileNotFoundError:
            target.unlink(missing_ok=True)
            missing.append(name)
    return missing


def import_files(directory: Path) -> int:
    """Stores every file under `directory` under its relative name (export_files' layout), unless a file of
    that name is stored already; how many were stored."""
    stored = 0
    for path in sorted(directory.rglob("*")):
        name = path.relative_to(directory).as_posix()
        if not path.is_file() or default_storage.exists(name):
            continue
        with path.open("rb") as content:
            saved = default_storage.save(name, File(content, name))
        if saved != name:
            raise RuntimeError(f"{name} was stored as {saved}")
        stored += 1
    return stored
