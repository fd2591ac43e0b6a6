"""Small files that cost a lot to open: for the input-limit tests and `bench/input_limits.py`."""

from __future__ import annotations

import struct
import zlib


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def flat_png(width: int, height: int, *, rgba: bool = False) -> bytes:
    """A valid PNG of one flat colour: a few hundred kB on disk however large the canvas (a
    13,000 × 13,000 RGBA one is 0.7 MB and decodes to 676 MB). Written row by row, so making it
    never holds the canvas in memory."""
    channels, colour_type = (4, 6) if rgba else (1, 0)
    header = struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0)
    squeeze = zlib.compressobj(9)
    row = b"\x00" * (1 + width * channels)  # filter byte "none", then the pixels
    body = b"".join(squeeze.compress(row) for _ in range(height)) + squeeze.flush()
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", body) + _chunk(b"IEND", b"")
