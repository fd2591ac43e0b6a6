"""Named browser profiles: a site's sign-in kept, so the model can use it without the password.

A profile is the cookies and local storage of a browser context (Playwright's "storage state"),
kept as JSON in `NAVI_BROWSER_PROFILES_DIR/<user>/<name>.json` (folders 0700, files 0600, written
whole and renamed into place). The user signs into it once with `navi browser login NAME URL`
(`navi/cli/browser.py`); a conversation's browser opened with `profile: NAME` starts from it, and
what the sites changed (a refreshed cookie, a sign-out) is written back when that browser closes.
Each user has their own profiles; a profile is a file, so every `navi serve` worker on the machine
reads the same one. The folder is hidden from Chromium's confinement, like Navi's other data.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
_OWNER = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.@-]{0,127}$")
MAX_BYTES = 5 * 1024 * 1024  # a profile's JSON; a bigger one is not read (nor written)


class ProfileError(ValueError):
    """A bad profile name, a missing or unreadable profile."""


@dataclass(frozen=True)
class Profiles:
    root: Path

    def folder(self, owner: str) -> Path:
        if not _OWNER.match(owner) or owner in (".", ".."):
            raise ProfileError(f"no browser profiles for the user {owner!r}")
        return self.root / owner

    def path(self, owner: str, name: str) -> Path:
        if not NAME.match(name):
            raise ProfileError(
                f"bad browser profile name {name[:60]!r}: lower-case letters, digits, '-' and '_', "
                "at most 40, starting with a letter or digit"
            )
        return self.folder(owner) / f"{name}.json"

    def names(self, owner: str) -> list[str]:
        folder = self.folder(owner)
        if not folder.is_dir():
            return []
        return sorted(p.stem for p in folder.glob("*.json") if NAME.match(p.stem) and p.is_file())

    def exists(self, owner: str, name: str) -> bool:
        return self.path(owner, name).is_file()

    def load(self, owner: str, name: str) -> dict[str, Any]:
        """The profile's storage state; `ProfileError` when it is missing or unreadable."""
        path = self.path(owner, name)
        try:
            if path.stat().st_size > MAX_BYTES:
                raise ProfileError(f"the browser profile {name!r} is over {MAX_BYTES:,} bytes")
            state = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ProfileError(
                f"there is no browser profile {name!r}: the user signs into one with "
                f"`navi browser login {name} URL`"
            ) from None
        except (OSError, ValueError) as exc:
            raise ProfileError(f"the browser profile {name!r} cannot be read: {exc}") from exc
        if not isinstance(state, dict):
            raise ProfileError(f"the browser profile {name!r} is not a storage state")
        return {"cookies": list(state.get("cookies") or []), "origins": list(state.get("origins") or [])}

    def save(self, owner: str, name: str, state: dict[str, Any]) -> Path:
        path = self.path(owner, name)
        body = json.dumps(state, ensure_ascii=False)
        if len(body) > MAX_BYTES:
            raise ProfileError(f"the browser profile {name!r} would be over {MAX_BYTES:,} bytes")
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:  # mkstemp made it 0600
                fh.write(body)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return path

    def remove(self, owner: str, name: str) -> bool:
        try:
            self.path(owner, name).unlink()
        except FileNotFoundError:
            return False
        return True
