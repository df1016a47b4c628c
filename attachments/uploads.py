"""What an uploaded file must be to be stored, and how a stored one is served back: the rules in one place.

A file is accepted when its extension is on the list and its content agrees with it: puremagic names
binary formats by their signature, Office and OpenDocument files are looked into (they are ZIP
containers), text is decoded. Markup and executables are refused whatever their name, since a browser
or a desktop that trusts the content over the name would run them.
"""

import json
import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from email.parser import HeaderParser
from pathlib import PurePath

import puremagic
from django.conf import settings
from django.core.files.uploadedfile import UploadedFile

from core.errors import RuleViolation

FIELD = "files[]"
MAX_FILE_SIZE = 10 * 1024 * 1024
# Part headers, boundaries and the small text fields beside the files of one upload request.
MULTIPART_OVERHEAD = 1024 * 1024
# Browsers sniff at most the first 1445 bytes of a response; markup later in a text file is only text.
HEAD_SIZE = 4096
MISMATCH = "content does not match its extension"
EXECUTABLE_SIGNATURES = (
    b"\x7fELF",  # Linux, BSD
    b"MZ",  # Windows (PE, DOS)
    b"\xfe\xed\xfa\xce", b"\xfe\xed\xfa\xcf", b"\xce\xfa\xed\xfe", b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe",  # macOS
)
# The start of a document a browser would render as HTML or XML (the tags of WHATWG MIME sniffing, plus
# svg), after a byte order mark and blanks: a doctype, comment or processing instruction, or a tag.
MARKUP = re.compile(
    rb"(?:\xef\xbb\xbf)?\s*<(?:[!?]|(?:html|head|body|script|iframe|h1|div|font|table|a|style|title|b|br|p|svg)"
    rb"(?:[\s/>]|\Z))", re.IGNORECASE)
# What zipfile raises on a damaged, truncated, encrypted or unsupported archive.
ZIP_ERRORS = (zipfile.BadZipFile, EOFError, OSError, ValueError, NotImplementedError, RuntimeError)
# zipfile reads the whole central directory when it opens an archive, some 20 µs of CPU per member: an
# archive may list at most this many (120,000 empty ones fit in 10 MB and cost seconds).
MAX_ZIP_MEMBERS = 10_000
# Every entry of a ZIP central directory begins with this signature (APPNOTE.TXT 4.3.12).
ZIP_DIRECTORY_ENTRY = b"PK\x01\x02"


class Refused(Exception):
    """Why a file is refused; the caller names the file."""


@dataclass(frozen=True)
class FileType:
    mime_type: str
    check: Callable[[UploadedFile], None]  # raises Refused when the content disagrees
    inline: bool = False  # shown in the browser (raster images, PDF) rather than downloaded


@dataclass(frozen=True)
class Upload:
    file: UploadedFile
    name: str  # the sanitized original name, for display only
    mime_type: str  # of the type the content was checked against


def _sniffed(file: UploadedFile) -> set[str]:
    """Every format puremagic finds a signature of, as extensions (".png")."""
    file.seek(0)
    try:
        return {match.extension for match in puremagic.magic_stream(file)}
    except puremagic.PureError:
        return set()


def _signature(*extensions: str) -> Callable[[UploadedFile], None]:
    def check(file: UploadedFile) -> None:
        if not _sniffed(file) & set(extensions):
            raise Refused(MISMATCH)

    return check


def directory_entries_at_most(file: UploadedFile) -> int:
    """An upper bound of the members any ZIP reader can list from this file, found without reading its
    directory: the number of central directory entry signatures in it."""
    count, carry = 0, b""
    for chunk in file.chunks():
        window = carry + chunk
        count += window.count(ZIP_DIRECTORY_ENTRY)
        carry = window[-(len(ZIP_DIRECTORY_ENTRY) - 1):]  # too short to hold a whole signature counted already
    return count


def _zip(inspect: Callable[[zipfile.ZipFile], bool]) -> Callable[[UploadedFile], None]:
    """A ZIP file that starts as one (a program with a ZIP appended does not), of at most MAX_ZIP_MEMBERS
    members, and whose members pass `inspect`."""

    def check(file: UploadedFile) -> None:
        _signature(".zip")(file)
        if directory_entries_at_most(file) > MAX_ZIP_MEMBERS:
            raise Refused(f"is an archive of more than {MAX_ZIP_MEMBERS:,} members")
        try:
            with zipfile.ZipFile(file) as archive:
                agrees = inspect(archive)
        except ZIP_ERRORS:
            agrees = False
        if not agrees:
            raise Refused(MISMATCH)

    return check


def _ooxml(folder: str) -> Callable[[UploadedFile], None]:
    """Office Open XML (docx, xlsx, pptx): the content types and the application's folder."""

    def inspect(archive: zipfile.ZipFile) -> bool:
        names = archive.namelist()
        return "[Content_Types].xml" in names and any(name.startswith(folder) for name in names)

    return _zip(inspect)


def _odf(mime_type: str) -> Callable[[UploadedFile], None]:
    """OpenDocument (odt, ods, odp): a `mimetype` member that names the kind of document."""

    def inspect(archive: zipfile.ZipFile) -> bool:
        info = next((info for info in archive.infolist() if info.filename == "mimetype"), None)
        # The format keeps `mimetype` uncompressed; a compressed member could inflate to gigabytes when read.
        return (info is not None and info.compress_type == zipfile.ZIP_STORED and info.file_size == len(mime_type)
                and archive.read(info) == mime_type.encode())

    return _zip(inspect)


def _text(file: UploadedFile) -> str:
    file.seek(0)
    data = file.read()
    if b"\0" in data:
        raise Refused("is not a text file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise Refused("is not UTF-8 text") from None


def _json(file: UploadedFile) -> None:
    try:
        json.loads(_text(file))
    except (ValueError, RecursionError):
        raise Refused("is not valid JSON") from None


def _email(file: UploadedFile) -> None:
    """RFC 822: a block of header fields, From among them, before the body."""
    headers = HeaderParser().parsestr(_text(file), headersonly=True)
    if headers.defects or "From" not in headers:
        raise Refused("is not an email message")


def _odf_type(kind: str) -> FileType:
    mime_type = f"application/vnd.oasis.opendocument.{kind}"
    return FileType(mime_type, _odf(mime_type))


def _ooxml_type(kind: str, folder: str) -> FileType:
    return FileType(f"application/vnd.openxmlformats-officedocument.{kind}", _ooxml(folder))


JPEG = FileType("image/jpeg", _signature(".jpg", ".jpeg", ".jfif", ".jpe"), inline=True)
TIFF = FileType("image/tiff", _signature(".tif", ".tiff"), inline=True)
HEIF_SIGNATURES = (".heic", ".heif")
GZIP = FileType("application/gzip", _signature(".gz"))

TYPES: dict[str, FileType] = {
    "jpg": JPEG,
    "jpeg": JPEG,
    "png": FileType("image/png", _signature(".png"), inline=True),
    "gif": FileType("image/gif", _signature(".gif"), inline=True),
    "webp": FileType("image/webp", _signature(".webp"), inline=True),
    "bmp": FileType("image/bmp", _signature(".bmp"), inline=True),
    "tif": TIFF,
    "tiff": TIFF,
    "heic": FileType("image/heic", _signature(*HEIF_SIGNATURES), inline=True),
    "heif": FileType("image/heif", _signature(*HEIF_SIGNATURES), inline=True),
    "avif": FileType("image/avif", _signature(".avif"), inline=True),
    "pdf": FileType("application/pdf", _signature(".pdf"), inline=True),
    # The legacy Office formats share one container (OLE2), which puremagic names as all three.
    "doc": FileType("application/msword", _signature(".doc")),
    "xls": FileType("application/vnd.ms-excel", _signature(".xls")),
    "ppt": FileType("application/vnd.ms-powerpoint", _signature(".ppt")),
    "docx": _ooxml_type("wordprocessingml.document", "word/"),
    "xlsx": _ooxml_type("spreadsheetml.sheet", "xl/"),
    "pptx": _ooxml_type("presentationml.presentation", "ppt/"),
    "odt": _odf_type("text"),
    "ods": _odf_type("spreadsheet"),
    "odp": _odf_type("presentation"),
    "rtf": FileType("application/rtf", _signature(".rtf")),
    "csv": FileType("text/csv", _text),
    "txt": FileType("text/plain", _text),
    "md": FileType("text/markdown", _text),
    "json": FileType("application/json", _json),
    "zip": FileType("application/zip", _zip(lambda archive: True)),
    "gz": GZIP,
    "tgz": GZIP,
    "tar": FileType("application/x-tar", _signature(".tar")),
    "bz2": FileType("application/x-bzip2", _signature(".bz2")),
    "xz": FileType("application/x-xz", _signature(".xz")),
    "7z": FileType("application/x-7z-compressed", _signature(".7z")),
    "rar": FileType("application/vnd.rar", _signature(".rar")),
    "eml": FileType("message/rfc822", _email),
}
INLINE_TYPES = frozenset(file_type.mime_type for file_type in TYPES.values() if file_type.inline)


def display_name(name: str) -> str:
    """The last part of a path, without quotes or unprintable characters (line breaks, bidi overrides)."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    return "".join(char for char in base if char.isprintable() and char != '"').strip() or "file"


def _forbid_dangerous(head: bytes) -> None:
    if head.startswith(EXECUTABLE_SIGNATURES):
        raise Refused("is an executable")
    if head.startswith(b"#!"):
        raise Refused("is a script")
    if MARKUP.match(head):
        raise Refused("is HTML, SVG or XML markup")


def _file_type(file: UploadedFile, name: str) -> FileType:
    extension = PurePath(name).suffix.lower().removeprefix(".")
    file_type = TYPES.get(extension)
    if file_type is None:
        raise Refused(f"files of type .{extension} are not accepted" if extension else "has no file extension")
    if file.size > MAX_FILE_SIZE:
        raise Refused(f"is larger than {MAX_FILE_SIZE // (1024 * 1024)} MB")
    if not file.size:
        raise Refused("is empty")
    file.seek(0)
    _forbid_dangerous(file.read(HEAD_SIZE))
    file_type.check(file)
    file.seek(0)
    return file_type


def upload_body_max_size() -> int:
    """The largest legal upload request: as many files as a request may carry, each of the largest size."""
    return settings.DATA_UPLOAD_MAX_NUMBER_FILES * MAX_FILE_SIZE + MULTIPART_OVERHEAD


def accepted_upload(file: UploadedFile) -> Upload:
    """One uploaded file, checked: if refused, a 422 naming it and why."""
    name = display_name(file.name or "")
    try:
        return Upload(file, name, _file_type(file, name).mime_type)
    except Refused as refused:
        raise RuleViolation(f"files: {name}: {refused}", field="files") from None


def accepted_uploads(request) -> list[Upload]:
    """The request's `files[]`, every one checked: the first refused fails them all."""
    files = request.FILES.getlist(FIELD)  # more than DATA_UPLOAD_MAX_NUMBER_FILES: a 422 (core.api.exceptions)
    if not files:
        raise RuleViolation("files is required", field="files")
    return [accepted_upload(file) for file in files]
