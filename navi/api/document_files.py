"""Documents in and out over HTTP: which files the documents routes take, and how a document's
bytes are served back.

**In.** `POST /collections/{id}/documents` streams its files with the conversation upload's
receiver (navi/api/uploads.py: multipart parsed as it arrives, each file capped while it is read)
into a temporary folder, then hands the bytes to the store. The kinds taken are the ones Navi
reads (`navi.documents.extract.sniff`): PDF, Office and OpenDocument files, EPUB, HTML, Markdown,
text, CSV and e-mail. HTML is taken here, unlike in a conversation's folder, because it is never
opened from Navi's origin: it is only read for its text, and served back as text. Programs (by
their first bytes), zip-based programs and documents with macros are refused. A file whose bytes
are no document Navi reads is refused (415); a damaged one is taken and fails at indexing, with
the reason on the document.

**Out.** `GET /documents/{id}/file` answers inline, with the kind's media type, so a PDF opens in
the browser's own viewer (`#page=N` is the client's); `nosniff` always; and anything that could
render and run script on Navi's origin (HTML, SVG, XML, or a kind not known yet) as `text/plain`
under `Content-Security-Policy: sandbox`.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import unicodedata
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from navi.api.uploads import Checks, UploadError, receive_upload
from navi.documents.base import ExtractionError
from navi.documents.extract.sniff import EXTENSIONS, extension, sniff
from navi.sessions.filetypes import REFUSED, program_reason, zip_reason

# Extensions the documents routes take: what the extractor reads, without the macro-enabled
# Office kinds (`.docm`, `.xlsm`, `.pptm`).
DOCUMENT_EXTENSIONS = frozenset(EXTENSIONS) - {"docm", "xlsm", "pptm"}
TEXT_KINDS = frozenset({"text", "markdown", "csv"})

MEDIA_TYPES = {
    "pdf": "application/pdf",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "odt": "application/vnd.oasis.opendocument.text",
    "ods": "application/vnd.oasis.opendocument.spreadsheet",
    "odp": "application/vnd.oasis.opendocument.presentation",
    "epub": "application/epub+zip",
    "eml": "message/rfc822",
    "markdown": "text/markdown; charset=utf-8",
    "csv": "text/csv; charset=utf-8",
    "text": "text/plain; charset=utf-8",
}
AS_TEXT = "text/plain; charset=utf-8"  # HTML and whatever is not known: shown, never rendered


def accepted() -> str:
    return "Navi reads " + " ".join(f".{e}" for e in sorted(DOCUMENT_EXTENSIONS))


def _name_reason(name: str) -> str | None:
    ext = extension(name)
    if not ext:
        return None  # judged by its content
    if not ext.isascii() or unicodedata.normalize("NFKC", ext) != ext:
        return f"files of type .{ext} are not documents Navi reads. {accepted()}"
    if ext not in DOCUMENT_EXTENSIONS:
        return f"files of type .{ext} are not documents Navi reads. {accepted()}"
    return None


def _head_reason(name: str, head: bytes) -> str | None:
    what = program_reason(head)
    return f"{name} is {what}; programs are not documents" if what else None


def _complete_reason(name: str, head: bytes, path: Path) -> str | None:
    what = zip_reason(path)
    return f"{name} is {what}; {REFUSED}" if what else None


DOCUMENT_CHECKS = Checks(name=_name_reason, head=_head_reason, complete=_complete_reason)


def may_be_document(name: str) -> bool:
    """Whether a conversation's upload named `name` may be a document (then its bytes decide)."""
    return extension(name) in DOCUMENT_EXTENSIONS


def document_kind(data: bytes, name: str) -> str | None:
    """The document kind of an upload that is one (a conversation's `.pdf`, `.docx`, `.md`,
    `.csv`, `.txt`…), else None (a picture, JSON, a log, a file Navi cannot read)."""
    if not may_be_document(name):
        return None
    try:
        return sniff(data, name)
    except ExtractionError:
        return None


@dataclass
class Received:
    name: str
    path: Path  # in the temporary folder, until the `receive_documents` block ends

    async def read(self) -> bytes:
        return await asyncio.to_thread(self.path.read_bytes)


@asynccontextmanager
async def receive_documents(
    headers: dict[str, str], body: AsyncIterator[bytes], scratch: Path, *, max_bytes: int
) -> AsyncIterator[list[Received]]:
    """The files of a multipart body, each at most `max_bytes` (413 as soon as one passes it),
    in a temporary folder under `scratch` that is removed when the block ends. A file that is no
    document Navi reads is refused (415) before the block starts, so none of the files is added.
    The files are read one at a time: a request of many large files never sits in memory whole."""
    await asyncio.to_thread(scratch.mkdir, mode=0o700, parents=True, exist_ok=True)
    folder = Path(await asyncio.to_thread(tempfile.mkdtemp, prefix=".documents-", dir=scratch))
    try:
        stored = await receive_upload(
            headers, body, folder, max_bytes=max_bytes, public_prefix=folder, checks=DOCUMENT_CHECKS
        )
        received = [Received(f.name, Path(f.path)) for f in stored]
        for f in received:
            await asyncio.to_thread(_readable, await f.read(), f.name)
        yield received
    finally:
        await asyncio.to_thread(shutil.rmtree, folder, True)


def _readable(data: bytes, name: str) -> None:
    """Refuse (415) bytes that are no kind Navi reads; a damaged or locked file of a kind it
    reads is taken (its indexing fails with the reason)."""
    try:
        sniff(data, name)
    except ExtractionError as exc:
        if exc.code == "unsupported":
            raise UploadError(415, f"{name}: {exc.reason}. {accepted()}") from None


def file_headers(kind: str, name: str) -> tuple[str, dict[str, str]]:
    """The media type and headers a document's bytes are served with (see the module's doc)."""
    kind = kind or EXTENSIONS.get(extension(name), "")
    media = MEDIA_TYPES.get(kind, AS_TEXT)
    headers = {
        "Content-Disposition": f"inline; filename*=UTF-8''{quote(name, safe='')}",
        "X-Content-Type-Options": "nosniff",
    }
    if kind != "pdf":  # a PDF is for the browser's viewer, which a sandboxed answer would stop
        headers["Content-Security-Policy"] = "sandbox; default-src 'none'"
    return media, headers
