"""First run: give a new tools folder the shipped starter tools, the template and `enabled.json`.

Seeding happens only when the folder does not exist yet, so a user who deleted a starter tool does
not get it back on the next start, and no existing file is ever overwritten. The folder is made
0700 and its files 0600: code Navi runs, readable and writable by its owner only.
"""

from __future__ import annotations

import importlib.resources
import os
from importlib.resources.abc import Traversable
from pathlib import Path

from navi.logging import get_logger

log = get_logger(__name__)

SEED_SUFFIXES = (".py", ".json", ".md")


def seed_files() -> list[Traversable]:
    """The files shipped in `navi/tools/seed/` (no caches, no folders)."""
    folder = importlib.resources.files("navi.tools").joinpath("seed")
    if not folder.is_dir():
        return []
    return sorted(
        (f for f in folder.iterdir() if f.is_file() and f.name.endswith(SEED_SUFFIXES)),
        key=lambda f: f.name,
    )


def ensure_tools_dir(tools_dir: str | os.PathLike[str]) -> bool:
    """Create `tools_dir` with the seed files when it is missing; True when it seeded.

    An existing folder is left exactly as it is. Files are created exclusively, so even a folder
    created concurrently never has a file replaced.
    """
    root = Path(tools_dir)
    if root.exists():
        return False
    root.mkdir(mode=0o700, parents=True, exist_ok=True)  # modes are masked by the umask, never widened
    copied: list[str] = []
    for source in seed_files():
        target = root / source.name
        try:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        with os.fdopen(fd, "wb") as fh:
            fh.write(source.read_bytes())
        copied.append(source.name)
    log.info("tools_dir_seeded", tools_dir=str(root), files=copied)
    return True
