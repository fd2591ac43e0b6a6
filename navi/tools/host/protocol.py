"""The tool host's wire format: JSON objects, each prefixed by its length (4 bytes, big-endian).

Navi → host: `{"id", "op": "ping"}`, `{"id", "op": "import", "path"}`, `{"id", "op": "call",
"tool", "args", "session_id"}`, `{"id", "op": "cancel"}` (the id of a running call). Host → Navi,
one reply per request id: `{"id", "pong": true}`; `{"id", "tools": [{"name", "description",
"parameters", "timeout"}], "problems": [...]}` for an import; `{"id", "result": {"success",
"output", "error", "metadata"}}` for a call; `{"id", "cancelled": true}` for a cancelled call;
`{"id", "error"}` when a request could not be served.

The frames travel on the pipes Navi gives the host as stdin and stdout, but the host moves them
off fds 0 and 1 before any user code runs (see `serve.py`), so nothing a tool prints can corrupt
them. Navi treats a frame that does not parse as the end of the host.
"""

from __future__ import annotations

import asyncio
import json
import struct
from typing import IO, Any

HEADER = struct.Struct(">I")
MAX_FRAME = 16 * 1024 * 1024


class ProtocolError(Exception):
    """A frame that is too large, cut short or not a JSON object."""


def encode(message: dict[str, Any]) -> bytes:
    """One frame; values JSON cannot hold are written as text. Raises ProtocolError when too large."""
    try:
        text = json.dumps(message, ensure_ascii=False, default=str)
    except (TypeError, ValueError) as exc:  # e.g. a circular structure in a tool's metadata
        raise ProtocolError(f"the message cannot be written as JSON: {exc}") from None
    body = text.encode("utf-8", errors="replace")
    if len(body) > MAX_FRAME:
        raise ProtocolError(f"the message is too large ({len(body)} bytes; at most {MAX_FRAME})")
    return HEADER.pack(len(body)) + body


def _size(header: bytes) -> int:
    (size,) = HEADER.unpack(header)
    if size > MAX_FRAME:
        raise ProtocolError(f"a frame of {size} bytes is larger than {MAX_FRAME}")
    return int(size)


def _decode(body: bytes) -> dict[str, Any]:
    try:
        message = json.loads(body)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ProtocolError(f"a frame is not JSON: {exc}") from None
    if not isinstance(message, dict):
        raise ProtocolError("a frame is not a JSON object")
    return message


async def read_frame(reader: asyncio.StreamReader) -> dict[str, Any] | None:
    """The next message, or None at a clean end of the stream."""
    try:
        header = await reader.readexactly(HEADER.size)
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            return None
        raise ProtocolError("the stream ended inside a frame header") from None
    try:
        body = await reader.readexactly(_size(header))
    except asyncio.IncompleteReadError:
        raise ProtocolError("the stream ended inside a frame") from None
    return _decode(body)


def read_frame_sync(stream: IO[bytes]) -> dict[str, Any] | None:
    """`read_frame` for a blocking stream (a reader thread's)."""
    header = stream.read(HEADER.size)
    if not header:
        return None
    if len(header) < HEADER.size:
        raise ProtocolError("the stream ended inside a frame header")
    size = _size(header)
    body = stream.read(size)
    if len(body) < size:
        raise ProtocolError("the stream ended inside a frame")
    return _decode(body)
