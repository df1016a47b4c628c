"""The upload rules on their own: which files are accepted, as what, and how a stored name is served back."""

import io
import warnings
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from attachments.files import content_disposition
from attachments.uploads import MAX_FILE_SIZE, MAX_ZIP_MEMBERS, accepted_upload, display_name
from core.api.exceptions import RuleViolation
from tests import sample_files as samples


def refusal(name: str, content: bytes) -> str:
    with pytest.raises(RuleViolation) as refused:
        accepted_upload(SimpleUploadedFile(name, content))
    assert refused.value.field == "files"
    return refused.value.message


def odt_with_compressed_mimetype() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("mimetype", "application/vnd.oasis.opendocument.text")
    return buffer.getvalue()


def odt_needing_a_later_zip_version() -> bytes:
    content = bytearray(samples.odf("text"))
    central_record = content.index(b"PK\x01\x02")
    content[central_record + 6] = 99  # "version needed to extract": 9.9
    return bytes(content)


@pytest.mark.parametrize(("extension", "sample"), samples.ACCEPTED.items())
def test_every_accepted_type_with_its_mime_type(extension, sample):
    content, mime_type = sample
    upload = accepted_upload(SimpleUploadedFile(f"Notes.{extension.upper()}", content))
    assert (upload.name, upload.mime_type, upload.file.read()) == (f"Notes.{extension.upper()}", mime_type, content)


@pytest.mark.parametrize(("name", "content", "reason"), [
    # Executables, scripts and markup, whatever the name.
    ("tool.png", samples.ELF, "is an executable"),
    ("tool.txt", samples.WINDOWS_EXE, "is an executable"),
    ("tool.zip", samples.WINDOWS_EXE + samples.PLAIN_ZIP, "is an executable"),
    ("tool.gz", samples.MACH_O, "is an executable"),
    ("run.txt", samples.SHELL_SCRIPT, "is a script"),
    ("page.txt", samples.HTML, "is HTML, SVG or XML markup"),
    ("page.md", b"\xef\xbb\xbf\n  <SCRIPT>alert(1)</SCRIPT>", "is HTML, SVG or XML markup"),
    ("page.csv", b"<a href=//evil.example>x</a>", "is HTML, SVG or XML markup"),
    ("page.json", b"<!-- -->[1]", "is HTML, SVG or XML markup"),
    ("drawing.txt", samples.SVG, "is HTML, SVG or XML markup"),
    ("drawing.png", samples.XML_SVG, "is HTML, SVG or XML markup"),
    ("drawing.eml", b"<svg/onload=alert(1)>", "is HTML, SVG or XML markup"),
    # Content that is not what the extension says.
    ("photo.jpg", samples.png(), "content does not match its extension"),
    ("photo.avif", b"\x00\x00\x00\x18ftypisom" + b"\0" * 16, "content does not match its extension"),
    ("report.docx", samples.PDF, "content does not match its extension"),
    ("report.docx", samples.PLAIN_ZIP, "content does not match its extension"),
    ("report.xlsx", samples.DOCX, "content does not match its extension"),
    ("report.docx", b"junk" + samples.DOCX, "content does not match its extension"),
    ("report.odt", samples.odf("spreadsheet"), "content does not match its extension"),
    ("report.odt", odt_with_compressed_mimetype(), "content does not match its extension"),
    ("report.odt", samples.odf("text")[:-30], "content does not match its extension"),
    ("report.odt", odt_needing_a_later_zip_version(), "content does not match its extension"),
    ("report.pdf", samples.GIF, "content does not match its extension"),
    ("archive.zip", b"PK\x03\x04 not really", "content does not match its extension"),
    ("archive.tgz", samples.PLAIN_ZIP, "content does not match its extension"),
    ("notes.txt", "café".encode("latin-1"), "is not UTF-8 text"),
    ("notes.csv", b"a,b\n1,\0", "is not a text file"),
    ("notes.txt", samples.GIF, "is not a text file"),
    ("data.json", b'{"a": ', "is not valid JSON"),
    ("data.json", b"[" * 100_000, "is not valid JSON"),
    ("mail.eml", b"Hello Bob,\r\nsee you\r\n", "is not an email message"),
    ("mail.eml", b"Subject: no sender\r\n\r\nbody", "is not an email message"),
    # Names and sizes.
    ("empty.txt", b"", "is empty"),
    ("README", b"plain text", "has no file extension"),
    ("setup.exe", samples.WINDOWS_EXE, "files of type .exe are not accepted"),
    ("app.js", b"alert(1)", "files of type .js are not accepted"),
    ("page.html", samples.HTML, "files of type .html are not accepted"),
    ("drawing.svg", samples.SVG, "files of type .svg are not accepted"),
    ("photo.png.", samples.png(), "has no file extension"),
])
def test_refused_with_the_file_named_and_why(name, content, reason):
    assert refusal(name, content) == f"files: {name}: {reason}"


def test_size_limit_is_ten_megabytes():
    assert accepted_upload(SimpleUploadedFile("big.txt", b"x" * MAX_FILE_SIZE)).mime_type == "text/plain"
    assert refusal("bigger.txt", b"x" * (MAX_FILE_SIZE + 1)) == "files: bigger.txt: is larger than 10 MB"


def test_text_that_merely_starts_like_a_tag_is_text():
    assert accepted_upload(SimpleUploadedFile("notes.md", b"<3 thanks\n<abbr> is a tag")).mime_type == "text/markdown"


@pytest.mark.parametrize(("raw", "shown"), [
    ("../../etc/passwd.png", "passwd.png"),
    ("C:\\Users\\ada\\shot.png", "shot.png"),
    ('say "hi".txt', "say hi.txt"),
    ("two\r\nlines.txt", "twolines.txt"),
    ("evil\u202egnp.exe", "evilgnp.exe"),  # a right-to-left override would show "exe.png"
    ("Zeugnis Müller.pdf", "Zeugnis Müller.pdf"),
    ("  ", "file"),
])
def test_display_name(raw, shown):
    assert display_name(raw) == shown


@pytest.mark.parametrize(("name", "inline", "header"), [
    ("shot.png", True, 'inline; filename="shot.png"'),
    ("notes.txt", False, 'attachment; filename="notes.txt"'),
    ('a"b\r\nc/../d.pdf', True, 'inline; filename="d.pdf"'),
    ("Zeugnis Müller.pdf", True,
     "inline; filename=\"Zeugnis M_ller.pdf\"; filename*=UTF-8''Zeugnis%20M%C3%BCller.pdf"),
    ("报告.docx", False, "attachment; filename=\"__.docx\"; filename*=UTF-8''%E6%8A%A5%E5%91%8A.docx"),
])
def test_content_disposition(name, inline, header):
    assert content_disposition(name, inline=inline) == header


def zip_of(members: int, name: str = "a") -> bytes:
    """An archive of `members` empty members, all named `name` (short names keep 120,000 within 10 MB)."""
    buffer = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buffer, "w") as archive:
        warnings.simplefilter("ignore", UserWarning)  # "Duplicate name"
        info = zipfile.ZipInfo(name)
        for _ in range(members):
            archive.writestr(info, b"")
    return buffer.getvalue()


@pytest.fixture
def directories_read(monkeypatch):
    """The archives zipfile opened for reading (which reads their whole central directory)."""
    opened = []
    original = zipfile.ZipFile.__init__

    def counting(self, file, mode="r", *args, **kwargs):
        if mode == "r":
            opened.append(file)
        original(self, file, mode, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "__init__", counting)
    return opened


def test_an_archive_of_120000_members_is_refused_without_reading_its_directory(directories_read):
    content = zip_of(120_000)
    assert len(content) <= MAX_FILE_SIZE
    assert refusal("many.zip", content) == "files: many.zip: is an archive of more than 10,000 members"
    assert directories_read == []


@pytest.mark.parametrize("name", ["many.docx", "many.odt"])
def test_office_files_are_bounded_alike(name, directories_read):
    assert refusal(name, zip_of(MAX_ZIP_MEMBERS + 1)) == (
        f"files: {name}: is an archive of more than 10,000 members")
    assert directories_read == []


def test_an_archive_of_the_most_members_is_read(directories_read):
    upload = accepted_upload(SimpleUploadedFile("many.zip", zip_of(MAX_ZIP_MEMBERS)))
    assert (upload.mime_type, len(directories_read)) == ("application/zip", 1)


def test_a_signature_split_across_read_chunks_is_counted(monkeypatch):
    monkeypatch.setattr(SimpleUploadedFile, "DEFAULT_CHUNK_SIZE", 7)  # signatures straddle most chunk borders
    assert refusal("many.zip", zip_of(MAX_ZIP_MEMBERS + 1)) == (
        "files: many.zip: is an archive of more than 10,000 members")
