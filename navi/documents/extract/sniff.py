"""Which kind a document is: its first bytes first (a PDF named .txt is a PDF), its zip directory
for the zip-based formats, its extension for the text ones."""

from __future__ import annotations

import io
import re
import zipfile

from navi.documents.base import ExtractionError

OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
ENCRYPTION_INFO = "EncryptionInfo".encode("utf-16-le")
OOXML_EXTENSIONS = ("docx", "xlsx", "pptx", "docm", "xlsm", "pptm")
EXTENSIONS = {
    "pdf": "pdf",
    "docx": "docx",
    "docm": "docx",
    "xlsx": "xlsx",
    "xlsm": "xlsx",
    "pptx": "pptx",
    "pptm": "pptx",
    "odt": "odt",
    "ods": "ods",
    "odp": "odp",
    "epub": "epub",
    "html": "html",
    "htm": "html",
    "xhtml": "html",
    "md": "markdown",
    "markdown": "markdown",
    "csv": "csv",
    "tsv": "csv",
    "eml": "eml",
    "txt": "text",
    "text": "text",
}
ODF_TYPES = {
    "application/vnd.oasis.opendocument.text": "odt",
    "application/vnd.oasis.opendocument.spreadsheet": "ods",
    "application/vnd.oasis.opendocument.presentation": "odp",
}
_MAIL_HEADER = re.compile(
    rb"^(Return-Path|Received|From|To|Subject|Date|Message-ID|MIME-Version|Delivered-To|X-[\w-]+):",
    re.IGNORECASE,
)


def extension(name: str) -> str:
    base = name.rsplit("/", 1)[-1]
    return base.rsplit(".", 1)[-1].lower() if "." in base else ""


def sniff(data: bytes, name: str) -> str:
    """The document's kind, one of `base.Extracted.kind`'s, or ExtractionError: "encrypted" for an
    Office file with a password (OOXML encrypted is an OLE file), "unsupported" otherwise."""
    ext = extension(name)
    head = data[:1024]
    if b"%PDF-" in head:
        return "pdf"
    if data.startswith(OLE):
        # An encrypted OOXML file is an OLE file with an "EncryptionInfo" stream (its directory
        # may sit anywhere in the file; a search through 100 MB takes milliseconds).
        if ENCRYPTION_INFO in data or ext in OOXML_EXTENSIONS:
            raise ExtractionError(
                "encrypted",
                "the Office file is protected by a password; remove the password and send it again",
            )
        raise ExtractionError(
            "unsupported",
            "old binary Office files (.doc, .xls, .ppt) are not read; save it as .docx/.xlsx/.pptx",
        )
    if data.startswith(b"PK\x03\x04") or data.startswith(b"PK\x05\x06"):
        return _zip_kind(data, ext)
    if ext in EXTENSIONS and EXTENSIONS[ext] not in (
        "pdf",
        "docx",
        "xlsx",
        "pptx",
        "odt",
        "ods",
        "odp",
        "epub",
    ):
        return EXTENSIONS[ext]
    if ext in EXTENSIONS:  # a zip-based or PDF extension on bytes that are neither
        raise ExtractionError("corrupt", f"the file is named .{ext} but is not a {ext.upper()} file")
    if b"\x00" in head and not head.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ExtractionError("unsupported", "this kind of file is not one Navi reads")
    lower = head.lstrip().lower()
    if lower.startswith((b"<!doctype html", b"<html")):
        return "html"
    if _MAIL_HEADER.match(head):
        return "eml"
    return "text"


def _zip_kind(data: bytes, ext: str) -> str:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        names = set(archive.namelist())
        info = archive.getinfo("mimetype") if "mimetype" in names else None
        # Read only a small one: a member's size is checked before it is inflated.
        small = info is not None and info.file_size <= 200
        mimetype = archive.read(info).decode("ascii", "replace").strip() if small and info else ""
    except (zipfile.BadZipFile, EOFError, OSError, KeyError) as error:
        kind = EXTENSIONS.get(ext, "zip")
        raise ExtractionError(
            "corrupt", f"the {kind.upper()} file is damaged or cut short ({error})"
        ) from None
    if "word/document.xml" in names:
        return "docx"
    if "xl/workbook.xml" in names:
        return "xlsx"
    if "ppt/presentation.xml" in names:
        return "pptx"
    if mimetype in ODF_TYPES:
        return ODF_TYPES[mimetype]
    if mimetype == "application/epub+zip" or "META-INF/container.xml" in names:
        return "epub"
    raise ExtractionError("unsupported", "a zip archive that is not a document Navi reads")
