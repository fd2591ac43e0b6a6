"""`filesystem`: read, write and manage local files inside `FS_ALLOWED_PATHS`.

Every path goes through `PathPolicy.resolve` (real paths, `is_relative_to`, symlinks followed, Navi's
own secrets refused), and the I/O uses the resolved path. A folder holding a secret cannot be
copied, moved or deleted whole; listings show secrets marked, and never go into a secret folder.
Text files are read in pages of lines (and of at most `MAX_PAGE_CHARS` characters, read in bounded
chunks, so neither a large log nor a file without newlines lands in memory or the context whole);
binary files are described, not dumped.
"""

from __future__ import annotations

import asyncio
import fnmatch
import mimetypes
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from navi.tools.base import Tool, ToolResult
from navi.tools.paths import PathDenied, PathPolicy

PAGE_LINES = 400
MAX_PAGE_CHARS = 40_000
MAX_WRITE_CHARS = 2_000_000
MAX_ENTRIES = 500
SNIFF_BYTES = 8192
SKIP_CHARS = 65536  # how much of a skipped line is held at once


def _is_binary(path: Path) -> bool:
    with path.open("rb") as fh:
        head = fh.read(SNIFF_BYTES)
    if b"\x00" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start < len(head) - 4  # a multi-byte character cut at the sniff boundary is fine
    return False


@dataclass
class _Page:
    lines: list[str]
    more: bool  # the file goes on after these lines
    cut: bool  # the one line shown was longer than a page and is cut


def _skip_line(fh: TextIO) -> bool:
    """Read past one line, however long, holding at most `SKIP_CHARS` of it; False at the end."""
    got = False
    while chunk := fh.readline(SKIP_CHARS):
        got = True
        if chunk.endswith("\n"):
            break
    return got


def _read_page(fh: TextIO, offset: int, limit: int) -> _Page:
    """Up to `limit` lines of the text file `fh` from line `offset`, at most `MAX_PAGE_CHARS`
    characters in all.

    Reads by bounded chunks (`readline(n)`), never a whole line: a 400 MB file without a newline
    costs a page, not the file several times over. A first line longer than a page is cut."""
    lines: list[str] = []
    chars = 0
    for _ in range(offset - 1):
        if not _skip_line(fh):
            return _Page([], more=False, cut=False)
    while len(lines) < limit:
        room = MAX_PAGE_CHARS - chars
        line = fh.readline(room + 1)  # one character more than fits tells "too long"
        if not line:
            return _Page(lines, more=False, cut=False)
        if len(line) > room:
            if lines:  # it starts the next page
                return _Page(lines, more=True, cut=False)
            if not line.endswith("\n"):
                _skip_line(fh)  # the rest of the over-long line
            return _Page([line[:room]], more=fh.read(1) != "", cut=True)
        lines.append(line)
        chars += len(line)
    return _Page(lines, more=fh.read(1) != "", cut=False)


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M UTC")


SECRET_MARK = "  [Navi's own secret: off limits]"


def _entry(path: Path, shown: str) -> str:
    try:
        st = path.lstat()
    except OSError:
        return f"?    {shown}"
    if stat.S_ISLNK(st.st_mode):
        return f"link {shown} -> {os.readlink(path)}"
    if stat.S_ISDIR(st.st_mode):
        return f"dir  {shown}/"
    return f"file {shown}  ({_size(st.st_size)}, {_when(st.st_mtime)})"


class FilesystemTool(Tool):
    name = "filesystem"
    description = (
        "Files in the allowed folders only. `read` gives `limit` lines from line `offset` (from "
        "1); `write` (create or replace) or `append` `content`; `list` a folder (`recursive`: "
        "subfolders too); `find` files under `path` matching glob `pattern`; `move` or `copy` to "
        "`destination`; `delete` a file, or a folder when empty or `recursive`."
    )
    parameters = {
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": [
                    "read",
                    "write",
                    "append",
                    "list",
                    "find",
                    "info",
                    "mkdir",
                    "move",
                    "copy",
                    "delete",
                ],
            },
            "path": {"type": "string", "minLength": 1},
            "content": {"type": "string"},
            "destination": {"type": "string", "minLength": 1},
            "offset": {"type": "integer", "minimum": 1},
            "limit": {"type": "integer", "minimum": 1, "maximum": 2000},
            "pattern": {"type": "string", "minLength": 1},
            "recursive": {"type": "boolean"},
        },
        "required": ["action", "path"],
        "additionalProperties": False,
    }
    timeout = 60.0

    def __init__(self, policy: PathPolicy) -> None:
        self.policy = policy

    async def execute(self, params: dict[str, Any]) -> ToolResult:
        try:
            return await asyncio.to_thread(self._dispatch, params)
        except PathDenied as exc:
            return ToolResult.fail(str(exc))
        except FileNotFoundError:
            return ToolResult.fail(f"{params['path']} does not exist")
        except IsADirectoryError:
            return ToolResult.fail(f"{params['path']} is a directory (use action `list`)")
        except NotADirectoryError:
            return ToolResult.fail(f"{params['path']} is not a directory")
        except PermissionError as exc:
            return ToolResult.fail(f"permission denied: {exc.filename or params['path']}")
        except OSError as exc:
            return ToolResult.fail(f"{exc.strerror or exc}: {exc.filename or params['path']}")

    def _dispatch(self, p: dict[str, Any]) -> ToolResult:
        action = p["action"]
        # Deleting or moving a symlink acts on the link, not on what it points to.
        path = self.policy.resolve(p["path"], follow_last=action not in ("delete", "move"))
        handler = getattr(self, f"_{action}")
        return handler(path, p)

    # --- reading ---------------------------------------------------------------------------------
    def _read(self, path: Path, p: dict[str, Any]) -> ToolResult:
        if path.is_dir():
            raise IsADirectoryError(path)
        size = path.stat().st_size
        if _is_binary(path):
            kind = mimetypes.guess_type(path.name)[0] or "unknown type"
            hint = (
                "use image_view to look at it" if kind.startswith("image/") else "use code_exec to process it"
            )
            return ToolResult.ok(f"{p['path']} is a binary file ({kind}, {_size(size)}); not shown — {hint}.")
        offset, limit = p.get("offset", 1), p.get("limit", PAGE_LINES)
        with path.open(encoding="utf-8", errors="replace") as fh:
            page = _read_page(fh, offset, limit)
        if not page.lines and offset > 1:
            return ToolResult.fail(f"{p['path']} has fewer than {offset} lines")
        last = offset + len(page.lines) - 1
        header = f"[{p['path']}: lines {offset}–{last}, {_size(size)}]"
        note = (
            f"\n[line {offset} is longer than {MAX_PAGE_CHARS:,} characters: only its start is shown]"
            if page.cut
            else ""
        )
        footer = f"\n[more: continue with offset {last + 1}]" if page.more else "\n[end of file]"
        return ToolResult.ok(header + "\n" + "".join(page.lines).rstrip("\n") + note + footer)

    def _info(self, path: Path, p: dict[str, Any]) -> ToolResult:
        st = path.stat()
        kind = "directory" if stat.S_ISDIR(st.st_mode) else "file"
        return ToolResult.ok(
            f"{p['path']} → {path}\n{kind}, {_size(st.st_size)}, modified {_when(st.st_mtime)}, "
            f"mode {stat.filemode(st.st_mode)}"
        )

    def _list(self, path: Path, p: dict[str, Any]) -> ToolResult:
        if not path.is_dir():
            raise NotADirectoryError(path)
        entries: list[str] = []
        if p.get("recursive"):
            for root, dirs, files in os.walk(path, followlinks=False):
                dirs[:] = sorted(d for d in dirs if not self.policy.is_secret(Path(root) / d))
                for name in dirs + sorted(files):
                    full = Path(root) / name
                    entries.append(self._entry(full, str(full.relative_to(path))))
                if len(entries) >= MAX_ENTRIES:
                    break
        else:
            entries = [self._entry(child, child.name) for child in sorted(path.iterdir())]
        shown = entries[:MAX_ENTRIES]
        note = (
            f"\n[{len(entries) - MAX_ENTRIES} more entries not shown]" if len(entries) > MAX_ENTRIES else ""
        )
        return ToolResult.ok(
            f"[{p['path']}: {len(shown)} entries]\n" + "\n".join(shown) + note
            if shown
            else f"{p['path']} is empty."
        )

    def _find(self, path: Path, p: dict[str, Any]) -> ToolResult:
        pattern = p.get("pattern")
        if not pattern:
            return ToolResult.fail("`find` needs `pattern`, e.g. *.pdf")
        found: list[str] = []
        for root, dirs, files in os.walk(path, followlinks=False):
            dirs[:] = sorted(d for d in dirs if not self.policy.is_secret(Path(root) / d))
            for name in sorted(files):
                if fnmatch.fnmatch(name, pattern):
                    full = Path(root) / name
                    mark = SECRET_MARK if self.policy.is_secret(full, follow=False) else ""
                    found.append(str(full.relative_to(path)) + mark)
            if len(found) >= MAX_ENTRIES:
                break
        if not found:
            return ToolResult.ok(f"No files matching {pattern} under {p['path']}.")
        return ToolResult.ok(f"[{len(found)} files matching {pattern}]\n" + "\n".join(found[:MAX_ENTRIES]))

    def _entry(self, path: Path, shown: str) -> str:
        """One listing line; Navi's secrets are shown, marked, so the model does not try to open them."""
        return _entry(path, shown) + (SECRET_MARK if self.policy.is_secret(path, follow=False) else "")

    def _whole(self, path: Path, p: dict[str, Any]) -> None:
        """Refuse to copy, move or delete a folder that holds one of Navi's secrets."""
        if path.is_dir() and not path.is_symlink() and self.policy.covers_secret(path):
            raise PathDenied(
                f"{p['path']} holds Navi's own secret files (its database, access token, .env or SSH "
                f"hosts file); it cannot be {p['action']}d as a whole"
            )

    # --- writing ---------------------------------------------------------------------------------
    def _write(self, path: Path, p: dict[str, Any], *, append: bool = False) -> ToolResult:
        if "content" not in p:
            return ToolResult.fail(f"`{p['action']}` needs `content`")
        content: str = p["content"]
        if len(content) > MAX_WRITE_CHARS:
            return ToolResult.fail(
                f"content is too large ({len(content)} characters; at most {MAX_WRITE_CHARS})"
            )
        if path.is_dir():
            raise IsADirectoryError(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        if append:
            with path.open("a", encoding="utf-8") as fh:
                fh.write(content)
        else:
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    fh.write(content)
                if path.exists():
                    shutil.copymode(path, tmp)
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        verb = "Appended" if append else "Wrote"
        return ToolResult.ok(
            f"{verb} {len(content)} characters to {p['path']} ({_size(path.stat().st_size)})."
        )

    def _append(self, path: Path, p: dict[str, Any]) -> ToolResult:
        return self._write(path, p, append=True)

    def _mkdir(self, path: Path, p: dict[str, Any]) -> ToolResult:
        path.mkdir(parents=True, exist_ok=True)
        return ToolResult.ok(f"Folder {p['path']} exists.")

    def _delete(self, path: Path, p: dict[str, Any]) -> ToolResult:
        self._whole(path, p)
        if path.is_dir() and not path.is_symlink():
            if p.get("recursive"):
                shutil.rmtree(path)
            else:
                try:
                    path.rmdir()
                except OSError:
                    return ToolResult.fail(f"{p['path']} is a folder that is not empty; pass recursive=true")
        else:
            path.unlink()
        return ToolResult.ok(f"Deleted {p['path']}.")

    def _target(self, p: dict[str, Any]) -> Path:
        if not p.get("destination"):
            raise PathDenied(f"`{p['action']}` needs `destination`")
        return self.policy.resolve(p["destination"])

    def _move(self, path: Path, p: dict[str, Any]) -> ToolResult:
        self._whole(path, p)
        target = self._target(p)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(path, target)
        return ToolResult.ok(f"Moved {p['path']} to {p['destination']}.")

    def _copy(self, path: Path, p: dict[str, Any]) -> ToolResult:
        self._whole(path, p)
        target = self._target(p)
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.is_dir():
            shutil.copytree(path, target, symlinks=True)
        else:
            shutil.copy2(path, target, follow_symlinks=True)
        return ToolResult.ok(f"Copied {p['path']} to {p['destination']}.")
