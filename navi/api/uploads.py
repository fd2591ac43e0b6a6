"""File uploads: streamed to disk, capped while reading, only kinds the model reads, names made safe.

Which files are taken (an allowlist of kinds, by name and by content) is navi/sessions/filetypes.py: the
name is checked as soon as a part's headers arrive, the content for programs when its first bytes
have, and zip-based programs and the content's kind once the part is complete.

The multipart body is parsed as it arrives (`python-multipart`'s streaming parser), so a file is
never held in memory and an oversized one is answered with 413 as soon as it passes the cap. Each
part is written to a hidden temporary file in the session's folder and only renamed into place when
it is complete and has passed the checks; anything else is deleted.

Uploads are the owner's own documents: folders Navi makes for them are 0700 and the files 0600,
whatever the umask, so other accounts on the machine cannot read them.
"""

from __future__ import annotations

import asyncio
import os
import re
import unicodedata
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from python_multipart import MultipartParser
from python_multipart.multipart import parse_options_header

from navi.sessions.files import claim
from navi.sessions.filetypes import (
    REFUSED,
    SNIFF_BYTES,
    content_reason,
    executable_reason,
    extension_reason,
    kind_reason,
    zip_reason,
)

MAX_FILES = 20


@dataclass(frozen=True)
class Checks:
    """What an upload route takes, checked as the bytes arrive: `name` (a part's file name, before
    a byte is written), `head` (its first `SNIFF_BYTES`), `complete` (the name, the head and the
    written file, in a thread). Each gives why the file is refused (415), or None."""

    name: Callable[[str], str | None]
    head: Callable[[str, bytes], str | None]
    complete: Callable[[str, bytes, Path], str | None]


def _session_complete(name: str, head: bytes, path: Path) -> str | None:
    reason = executable_reason(name, head)
    if reason is None and (what := zip_reason(path)):
        reason = f"{name} is {what}; {REFUSED}"
    return reason or kind_reason(name, head, path)


def _session_head(name: str, head: bytes) -> str | None:
    what = content_reason(head)
    return f"{name} is {what}; {REFUSED}" if what else None


# A conversation's uploads: the kinds the model reads (navi/sessions/filetypes.py).
SESSION_CHECKS = Checks(name=extension_reason, head=_session_head, complete=_session_complete)


class UploadError(Exception):
    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


@dataclass
class StoredFile:
    name: str
    path: str
    size: int
    media_type: str


def safe_filename(raw: str) -> str:
    """A name with no directory part, no NUL or control characters, no leading dots, ≤ 150 chars."""
    name = raw.replace("\\", "/").rsplit("/", 1)[-1]
    name = unicodedata.normalize("NFC", name)
    name = "".join(ch for ch in name if ch.isprintable() and ch not in '<>:"|?*\x00')
    name = re.sub(r"\s+", " ", name).strip(" .")
    if not name or name in (".", ".."):
        name = "upload"
    stem, dot, ext = name.rpartition(".")
    if dot and stem:
        ext = ext[:16]
        name = f"{stem[: 150 - len(ext) - 1]}.{ext}"
    return name[:150]


def _make_folder(folder: Path) -> None:
    """The session's folder, and SESSION_FILES_DIR above it, made 0700 when Navi creates them."""
    folder.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder.mkdir(mode=0o700, exist_ok=True)


@dataclass
class _Part:
    headers: dict[str, bytes] = field(default_factory=dict)
    filename: str | None = None
    content_type: str = "application/octet-stream"
    temp: Path | None = None
    handle: IO[bytes] | None = None
    size: int = 0
    head: bytes = b""


class _Receiver:
    """Callbacks for the streaming parser; writes parts to temporary files as they arrive."""

    def __init__(self, folder: Path, max_bytes: int, checks: Checks = SESSION_CHECKS) -> None:
        self.folder = folder
        self.max_bytes = max_bytes
        self.checks = checks
        self.part: _Part | None = None
        self.done: list[_Part] = []
        self._field = b""
        self._value = b""

    def callbacks(self) -> dict[str, Any]:
        return {
            "on_part_begin": self._begin,
            "on_header_field": lambda data, start, end: self._append("_field", data[start:end]),
            "on_header_value": lambda data, start, end: self._append("_value", data[start:end]),
            "on_header_end": self._header_end,
            "on_headers_finished": self._headers_finished,
            "on_part_data": self._data,
            "on_part_end": self._end,
        }

    def _append(self, attr: str, data: bytes) -> None:
        setattr(self, attr, getattr(self, attr) + data)

    def _begin(self) -> None:
        if len(self.done) >= MAX_FILES:
            raise UploadError(413, f"at most {MAX_FILES} files per upload")
        self.part = _Part()

    def _header_end(self) -> None:
        assert self.part is not None
        self.part.headers[self._field.decode("latin-1").lower()] = self._value
        self._field = self._value = b""

    def _headers_finished(self) -> None:
        part = self.part
        assert part is not None
        _, options = parse_options_header(part.headers.get("content-disposition", b""))
        raw = options.get(b"filename")
        if raw is not None:
            part.filename = raw.decode("utf-8", errors="replace")
            part.content_type = part.headers.get("content-type", b"application/octet-stream").decode(
                "latin-1"
            )
            if reason := self.checks.name(safe_filename(part.filename)):
                raise UploadError(415, reason)  # before a byte of it is written
            part.temp = self.folder / f".upload-{uuid.uuid4().hex}.part"
            fd = os.open(part.temp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)  # renamed into place
            part.handle = os.fdopen(fd, "wb")

    def _data(self, data: bytes, start: int, end: int) -> None:
        part = self.part
        if part is None or part.handle is None:
            return  # a plain form field: ignored
        chunk = data[start:end]
        if len(part.head) < SNIFF_BYTES:
            part.head += chunk[: SNIFF_BYTES - len(part.head)]
            if len(part.head) == SNIFF_BYTES and (why := self.checks.head(part.filename or "", part.head)):
                raise UploadError(415, why)
        part.size += len(chunk)
        if part.size > self.max_bytes:
            raise UploadError(
                413, f"{part.filename} is larger than the {self.max_bytes // (1024 * 1024)} MB limit"
            )
        part.handle.write(chunk)

    def _end(self) -> None:
        part = self.part
        if part is not None and part.handle is not None:
            part.handle.close()
            self.done.append(part)
        self.part = None

    def discard(self) -> None:
        for part in [*self.done, *([self.part] if self.part else [])]:
            if part.handle is not None and not part.handle.closed:
                part.handle.close()
            if part.temp is not None:
                part.temp.unlink(missing_ok=True)


async def receive_upload(
    headers: dict[str, str],
    body: AsyncIterator[bytes],
    folder: Path,
    *,
    max_bytes: int,
    public_prefix: Path,
    checks: Checks = SESSION_CHECKS,
) -> list[StoredFile]:
    """Parse a multipart body into `folder`; returns the stored files. Raises `UploadError`.
    `checks`: which files are taken (by default a conversation's kinds)."""
    ctype, options = parse_options_header(headers.get("content-type", ""))
    boundary = options.get(b"boundary")
    if ctype != b"multipart/form-data" or not boundary:
        raise UploadError(415, "send the file as multipart/form-data")
    declared = headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > max_bytes * MAX_FILES + 1024 * 1024:
        raise UploadError(413, f"the upload is larger than the {max_bytes // (1024 * 1024)} MB limit")
    await asyncio.to_thread(_make_folder, folder)
    receiver = _Receiver(folder, max_bytes, checks)
    parser = MultipartParser(boundary, receiver.callbacks())  # type: ignore[arg-type]
    try:
        async for chunk in body:
            parser.write(chunk)
        parser.finalize()
        if receiver.part is not None:
            raise UploadError(400, "the upload ended before the file was complete")
        stored = []
        for part in receiver.done:
            if part.size == 0 and not part.filename:
                continue
            name = safe_filename(part.filename or "upload")
            assert part.temp is not None
            if len(part.head) < SNIFF_BYTES and (reason := checks.head(name, part.head)):
                raise UploadError(415, reason)  # a short file: its whole content is the head
            reason = await asyncio.to_thread(checks.complete, name, part.head, part.temp)
            if reason:
                raise UploadError(415, reason)
            target = claim(folder, name)
            if target is None:
                raise UploadError(409, f"too many files named {name}")
            os.replace(part.temp, target)
            stored.append(
                StoredFile(target.name, str(public_prefix / target.name), part.size, part.content_type)
            )
    except UploadError:
        receiver.discard()
        raise
    except Exception as exc:  # the multipart parser's own errors: a malformed body
        receiver.discard()
        raise UploadError(400, f"malformed upload: {exc}") from None
    if not stored:
        receiver.discard()
        raise UploadError(400, "no file in the upload (send it in a form field with a filename)")
    return stored
