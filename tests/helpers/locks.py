"""The POSIX (fcntl) locks a process holds on a file, read from /proc/locks (Linux): SQLite's
locks, which a process loses when it closes any descriptor of the file."""

from __future__ import annotations

import os
from pathlib import Path


def held_on(pid: int, path: Path | str) -> list[str]:
    """The lines of /proc/locks for the locks process `pid` holds on `path` now."""
    st = os.stat(path)
    where = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    return [line for line in Path("/proc/locks").read_text().splitlines() if f" {pid} {where} " in f"{line} "]
