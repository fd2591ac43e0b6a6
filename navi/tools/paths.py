"""Which filesystem paths tools may touch (`FS_ALLOWED_PATHS`).

A path is allowed when its fully resolved real path — every symlink followed, every `..` applied —
lies inside the resolved real path of an allowed root, compared with `Path.is_relative_to` (so
`/srv/data-evil` is not inside `/srv/data`). Callers must use the returned resolved path for the
actual I/O, never the text they were given.
"""

from __future__ import annotations

import os
from pathlib import Path


class PathDenied(PermissionError):
    """The path is outside the allowed roots; the message says which roots are allowed."""


class PathPolicy:
    def __init__(self, allowed: list[str], *, base: Path | None = None) -> None:
        self.unrestricted = not allowed or "*" in allowed
        self.base = base or Path.cwd()
        self.roots = (
            [] if self.unrestricted else [Path(os.path.realpath(Path(a).expanduser())) for a in allowed]
        )

    def describe(self) -> str:
        return "anywhere" if self.unrestricted else ", ".join(str(r) for r in self.roots)

    def resolve(self, raw: str, *, follow_last: bool = True) -> Path:
        """The real path `raw` refers to, checked against the roots; raises `PathDenied`.

        `follow_last=False` resolves everything but the final component, for acting on a symlink
        itself (deleting or moving the link, not what it points to).
        """
        if not raw or "\x00" in raw:
            raise PathDenied("a path must be non-empty text without NUL characters")
        path = Path(raw).expanduser()
        if not path.is_absolute():
            path = self.base / path
        if follow_last or path.name in ("", ".", ".."):
            real = Path(os.path.realpath(path))
        else:
            real = Path(os.path.realpath(path.parent)) / path.name
        if not self.unrestricted and not any(real.is_relative_to(root) for root in self.roots):
            raise PathDenied(f"{raw} is outside the allowed paths ({self.describe()})")
        return real

    def allows(self, raw: str) -> bool:
        try:
            self.resolve(raw)
        except PathDenied:
            return False
        return True
