"""An export file as it arrives: ChatGPT and Claude send a `.zip` (conversations.json beside the
account's other files — user.json, chat.html, uploaded images), and some people unpack it first
and give its conversations.json. Either way `load_json` gives the conversations' JSON.

The zip is read in memory: only the member named conversations.json (the one nearest the top,
if a folder holds another) is unpacked, at most `max_bytes` of it whatever its header says, so a
small zip that unpacks to gigabytes is refused having read no more than the cap. A file that is
neither a zip nor UTF-8 text is refused in one sentence saying what was expected, never with a
codec's message.
"""

from __future__ import annotations

import io
import zipfile
from typing import Any

from navi import safejson
from navi.sessions.archive import ArchiveError

ZIP_MAGIC = b"PK\x03\x04"
MEMBER = "conversations.json"
DEFAULT_MAX_BYTES = 64 * 1024 * 1024


class ExportError(ArchiveError):
    """The file is not the export it was said to be; the message says what is wrong, and where."""


def is_zip(data: str | bytes) -> bool:
    return isinstance(data, bytes) and data.startswith(ZIP_MAGIC)


def unzip(data: bytes, what: str, *, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The conversations.json inside an export's zip."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = [
                m for m in archive.infolist() if not m.is_dir() and m.filename.rsplit("/", 1)[-1] == MEMBER
            ]
            if not members:
                raise ExportError(
                    f"{what}: the zip holds no {MEMBER} — give the zip the service sent, or its {MEMBER}"
                )
            member = min(members, key=lambda m: (m.filename.count("/"), m.filename))
            if member.file_size > max_bytes:
                raise ExportError(_too_big(what, max_bytes))
            with archive.open(member) as fh:
                body = fh.read(max_bytes + 1)
    except ExportError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError, OSError) as exc:
        raise ExportError(f"{what}: the zip cannot be read ({exc})") from None
    except RuntimeError as exc:  # an encrypted member
        raise ExportError(f"{what}: the zip cannot be read ({exc})") from None
    if len(body) > max_bytes:
        raise ExportError(_too_big(what, max_bytes))
    return body


def _too_big(what: str, max_bytes: int) -> str:
    return f"{what}: its {MEMBER} unpacks to more than {max_bytes // (1024 * 1024)} MB (NAVI_IMPORT_MAX_MB)"


def load_json(data: str | bytes, what: str, *, max_bytes: int = DEFAULT_MAX_BYTES) -> Any:
    """The JSON of an export file (a zip: its conversations.json). `what` opens each refusal
    ("not a ChatGPT export")."""
    if is_zip(data):
        assert isinstance(data, bytes)
        data = unzip(data, what, max_bytes=max_bytes)
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ExportError(f"{what}: the file is neither JSON text nor a zip holding {MEMBER}") from None
    try:
        return safejson.loads(data)
    except safejson.UnsafeJSON as exc:
        raise ExportError(f"{what}: {exc}") from None
    except ValueError as exc:
        raise ExportError(f"{what}: the file is not JSON ({exc})") from None


def kind_of(data: Any) -> str | None:
    """What a file's JSON is: "navi" (a session-archive/v1 document), "chatgpt" or "claude" (an
    export's conversations, told apart by their first conversation's shape), or None."""
    if isinstance(data, dict) and "schema_version" in data and "messages" in data:
        return "navi"
    if isinstance(data, dict) and isinstance(data.get("conversations"), list):
        data = data["conversations"]
    if not isinstance(data, list):
        return None
    for item in data:
        if isinstance(item, dict) and "mapping" in item:
            return "chatgpt"
        if isinstance(item, dict) and "chat_messages" in item:
            return "claude"
    return "chatgpt" if not data else None
