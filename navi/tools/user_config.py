"""`tools/enabled.json`: the user tools every profile gets, on top of its own tool list.

The file is a JSON list of tool names. It is edited by hand as well as by `write_tool`, so reading
is tolerant: a missing file means no names, and a broken one is logged and treated as empty rather
than stopping the agent. Writes go through a temporary file and `os.replace`, so a reader never sees
half a file.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from navi.logging import get_logger

log = get_logger(__name__)

ENABLED_FILE = "enabled.json"


def enabled_path(tools_dir: str | os.PathLike[str]) -> Path:
    return Path(tools_dir) / ENABLED_FILE


def atomic_write_text(path: Path, text: str) -> None:
    """Write `text` to `path` so that readers see the old content or the new, never a mix."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        # A new file is its owner's only (tools are code Navi runs); a replaced one keeps its mode.
        os.chmod(tmp, path.stat().st_mode & 0o777 if path.exists() else 0o600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def parse_enabled(text: str, source: str = ENABLED_FILE) -> list[str]:
    """The tool names in `text`, or [] (with a warning) when it is not a JSON list of names."""
    try:
        data = json.loads(text) if text.strip() else []
    except json.JSONDecodeError as exc:
        log.warning("enabled_tools_invalid_json", file=source, error=str(exc))
        return []
    if not isinstance(data, list):
        log.warning("enabled_tools_not_a_list", file=source, found=type(data).__name__)
        return []
    names = [n for n in data if isinstance(n, str) and n]
    if len(names) != len(data):
        log.warning("enabled_tools_bad_entries", file=source, skipped=len(data) - len(names))
    return list(dict.fromkeys(names))


def read_enabled(tools_dir: str | os.PathLike[str]) -> list[str]:
    """The names in `tools_dir/enabled.json`, in file order without repeats; never raises."""
    path = enabled_path(tools_dir)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        log.warning("enabled_tools_unreadable", file=str(path), error=str(exc))
        return []
    return parse_enabled(text, str(path))


def write_enabled(tools_dir: str | os.PathLike[str], names: Iterable[str]) -> list[str]:
    """Replace the list (repeats dropped, order kept); returns what was written."""
    unique = list(dict.fromkeys(names))
    atomic_write_text(enabled_path(tools_dir), json.dumps(unique, indent=2) + "\n")
    return unique


def add_enabled(tools_dir: str | os.PathLike[str], name: str) -> bool:
    """Add `name` to the list; False when it was already there (the file is then left alone)."""
    names = read_enabled(tools_dir)
    if name in names:
        return False
    write_enabled(tools_dir, [*names, name])
    return True


def remove_enabled(tools_dir: str | os.PathLike[str], name: str) -> bool:
    """Remove `name` from the list; False when it was not there."""
    names = read_enabled(tools_dir)
    if name not in names:
        return False
    write_enabled(tools_dir, [n for n in names if n != name])
    return True


class EnabledTools:
    """`Agent.user_tools`: the enabled names, re-read only when the file changes.

    The agent asks once per user message; caching on the file's identity and mtime keeps that cheap
    and logs a broken file once, not on every message.
    """

    def __init__(self, tools_dir: str | os.PathLike[str]) -> None:
        self.tools_dir = Path(tools_dir)
        self._stamp: tuple[int, int, int] | None = None
        self._names: list[str] = []

    def __call__(self) -> list[str]:
        try:
            st = enabled_path(self.tools_dir).stat()
        except OSError:
            self._stamp, self._names = None, []
            return []
        stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        if stamp != self._stamp:
            self._names = read_enabled(self.tools_dir)
            self._stamp = stamp
        return list(self._names)
