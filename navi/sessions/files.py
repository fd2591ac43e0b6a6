"""Uploaded files' folders on disk (`SESSION_FILES_DIR/{session}/`): the sweep that deletes the
folders of sessions whose uploads nobody touched for `SESSION_FILES_TTL_HOURS`.

The upload itself (streamed, capped, checked) is the API's (`navi/api/uploads.py`); the sweep is a
background loop of a running Navi, started by the composition root.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from pathlib import Path

import structlog

log = structlog.stdlib.get_logger(__name__)


def sweep(root: Path, ttl_seconds: float, now: float | None = None) -> list[str]:
    """Remove the folders untouched for `ttl_seconds` by the file system's clock (`now`: that clock's
    present, for tests)."""
    removed: list[str] = []
    now = time.time() if now is None else now
    if not root.is_dir():
        return removed
    for folder in root.iterdir():
        if not folder.is_dir():
            continue
        try:
            newest = max((p.stat().st_mtime for p in folder.rglob("*")), default=folder.stat().st_mtime)
        except OSError:
            continue
        if now - newest > ttl_seconds:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder.name)
        else:
            for temp in folder.glob(".upload-*.part"):  # left by a crash mid-upload
                if now - temp.stat().st_mtime > 3600:
                    temp.unlink(missing_ok=True)
    return removed


async def cleanup_loop(root: Path, ttl_hours: float, interval: float = 600.0) -> None:
    """Delete session upload folders untouched for `ttl_hours`, every `interval` seconds."""
    while True:
        try:
            removed = await asyncio.to_thread(sweep, root, ttl_hours * 3600)
            if removed:
                log.info("uploads.expired", folders=len(removed))
        except Exception as exc:  # keep sweeping next time
            log.warning("uploads.cleanup_failed", error=str(exc))
        await asyncio.sleep(interval)


def claim(folder: Path, name: str) -> Path | None:
    """Reserve a free path for `name` in `folder`, made 0600 and empty: `name` itself, else
    " (1)", " (2)"… before the extension. None when ten thousand are taken."""
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem:
        stem, ext = name, ""
    for n in range(10_000):
        candidate = folder / (name if n == 0 else f"{stem} ({n}){'.' + ext if ext else ''}")
        try:
            os.close(os.open(candidate, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        except FileExistsError:
            continue
        return candidate
    return None
