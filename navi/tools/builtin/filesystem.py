"""`filesystem`: read, write and manage local files inside `FS_ALLOWED_PATHS`.

Every path goes through `PathPolicy.resolve` (real paths, `is_relative_to`, symlinks followed, Navi's
own secrets refused), and the I/O goes through `navi.tools.safe_io` on the resolved path: folder
descriptors from `/` down, never following a symlink, so a folder swapped for a symlink after the
check cannot send a read, a write or a listing outside. A file opened is checked against the
secrets again by inode. A folder holding a secret cannot be copied, moved or deleted whole;
listings show secrets marked, and never go into a secret folder. Other sessions' uploads (every
folder in SESSION_FILES_DIR but the current session's) are refused the same way, and left out of
listings and searches altogether: their names are other conversations' ids.
Text files are read in pages of lines (and of at most `MAX_PAGE_CHARS` characters, read in bounded
chunks, so neither a large log nor a file without newlines lands in memory or the context whole);
binary files are described, not dumped.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fnmatch
import functools
import io
import mimetypes
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from navi.tools import safe_io
from navi.tools.base import Tool, ToolResult
from navi.tools.paths import PathDenied, PathPolicy

PAGE_LINES = 400
MAX_PAGE_CHARS = 40_000
MAX_WRITE_CHARS = 2_000_000
MAX_ENTRIES = 500
SNIFF_BYTES = 8192
SKIP_CHARS = 65536  # how much of a skipped line is held at once


def _is_binary(head: bytes) -> bool:
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
UPLOADS_NOTE = "[other sessions' upload folders are not shown: they are off limits]"


def _entry(dir_fd: int, name: str, shown: str) -> str:
    """One listing line for `name` in the folder `dir_fd` (looked up there, never by path)."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return f"?    {shown}"
    if stat.S_ISLNK(st.st_mode):
        return f"link {shown} -> {os.readlink(name, dir_fd=dir_fd)}"
    if stat.S_ISDIR(st.st_mode):
        return f"dir  {shown}/"
    return f"file {shown}  ({_size(st.st_size)}, {_when(st.st_mtime)})"


class FilesystemTool(Tool):
    name = "filesystem"
    description = (
        "Read, write, list, find, move and delete files, in the allowed folders only. `read` gives "
        "`limit` lines from line `offset` (from 1); `write` (create or replace) or `append` "
        "`content`; `list` a folder (`recursive`: subfolders too); `find` files under `path` "
        "matching glob `pattern`; `move` or `copy` to `destination`; `delete` a file, or a folder "
        "when empty or `recursive`."
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
        with (
            safe_io.opened(path, os.O_RDONLY | os.O_NONBLOCK, check=self._check(path, p)) as fd,
            self._checked(fd, path, p) as raw,
        ):
            size = os.fstat(fd).st_size
            if _is_binary(raw.read(SNIFF_BYTES)):
                kind = mimetypes.guess_type(path.name)[0] or "unknown type"
                hint = (
                    "use image_view to look at it"
                    if kind.startswith("image/")
                    else "use code_exec to process it"
                )
                return ToolResult.ok(
                    f"{p['path']} is a binary file ({kind}, {_size(size)}); not shown — {hint}."
                )
            raw.seek(0)
            offset, limit = p.get("offset", 1), p.get("limit", PAGE_LINES)
            fh = io.TextIOWrapper(raw, encoding="utf-8", errors="replace")
            page = _read_page(fh, offset, limit)
            fh.detach()
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

    @contextlib.contextmanager
    def _checked(self, fd: int, path: Path, p: dict[str, Any], mode: str = "rb") -> Iterator[Any]:
        """The file object on `fd`, once `_opened` found it fit to use."""
        self._opened(os.fstat(fd), path, p)
        with open(fd, mode, closefd=False) as fh:
            yield fh

    def _check(self, path: Path, p: dict[str, Any]) -> Callable[[os.stat_result], None]:
        """`_opened` for `safe_io` to run before it opens the file (a secret is never opened)."""
        return functools.partial(self._opened, path=path, p=p)

    def _opened(self, st: os.stat_result, path: Path, p: dict[str, Any]) -> None:
        """Refuse what was opened if it is not a plain file, or is a secret after all (a hard link
        made since the check)."""
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
        if not stat.S_ISREG(st.st_mode):
            raise PathDenied(f"{p['path']} is not a regular file (a device, FIFO or socket)")
        if self.policy.is_secret_file(st):
            raise self.policy.secret_denied(p["path"])

    def _info(self, path: Path, p: dict[str, Any]) -> ToolResult:
        st = safe_io.stat_of(path)
        kind = "directory" if stat.S_ISDIR(st.st_mode) else "file"
        return ToolResult.ok(
            f"{p['path']} → {path}\n{kind}, {_size(st.st_size)}, modified {_when(st.st_mtime)}, "
            f"mode {stat.filemode(st.st_mode)}"
        )

    def _list(self, path: Path, p: dict[str, Any]) -> ToolResult:
        entries: list[str] = []
        with safe_io.folder(path, listable=True) as top:
            if p.get("recursive"):
                hidden = self.policy.covers_uploads(path)  # the walk leaves other sessions' out
                for root, dirs, files, dir_fd in self._walk(path, top):
                    for name in dirs + sorted(files):
                        entries.append(self._entry(dir_fd, name, path / root / name, str(root / name)))
                    if len(entries) >= MAX_ENTRIES:
                        break
            else:
                names = sorted(os.listdir(top))
                kept = [name for name in names if not self.policy.is_other_upload(path / name)]
                hidden = len(kept) < len(names)
                entries = [self._entry(top, name, path / name, name) for name in kept]
        shown = entries[:MAX_ENTRIES]
        more = len(entries) - MAX_ENTRIES
        notes = [f"[{more} more entries not shown]"] if more > 0 else []
        notes += [UPLOADS_NOTE] if hidden else []
        head = f"[{p['path']}: {len(shown)} entries]" if shown else f"{p['path']} is empty."
        return ToolResult.ok("\n".join([head, *shown, *notes]))

    def _walk(self, path: Path, top: int) -> Any:
        """`os.fwalk` below the folder `top` (the real `path`): (folder relative to `path`, its
        folders, its files, its descriptor). Symlinks are not followed, a folder swapped for one
        while the walk runs is skipped; secret folders and other sessions' uploads are not
        entered (nor shown)."""
        for root, dirs, files, dir_fd in os.fwalk(".", dir_fd=top, follow_symlinks=False):
            rel = Path(root)
            dirs[:] = sorted(d for d in dirs if not self._off_limits(path / rel / d))
            files = [f for f in files if not self.policy.is_other_upload(path / rel / f)]
            yield rel, dirs, files, dir_fd

    def _off_limits(self, folder: Path) -> bool:
        """A folder a listing or search does not enter: a secret, or another session's uploads."""
        return self.policy.is_secret(folder) or self.policy.is_other_upload(folder)

    def _find(self, path: Path, p: dict[str, Any]) -> ToolResult:
        pattern = p.get("pattern")
        if not pattern:
            return ToolResult.fail("`find` needs `pattern`, e.g. *.pdf")
        found: list[str] = []
        with safe_io.folder(path, listable=True) as top:
            for root, _dirs, files, _fd in self._walk(path, top):
                for name in sorted(files):
                    if fnmatch.fnmatch(name, pattern):
                        mark = SECRET_MARK if self.policy.is_secret(path / root / name, follow=False) else ""
                        found.append(str(root / name) + mark)
                if len(found) >= MAX_ENTRIES:
                    break
        if not found:
            return ToolResult.ok(f"No files matching {pattern} under {p['path']}.")
        return ToolResult.ok(f"[{len(found)} files matching {pattern}]\n" + "\n".join(found[:MAX_ENTRIES]))

    def _entry(self, dir_fd: int, name: str, full: Path, shown: str) -> str:
        """One listing line; Navi's secrets are shown, marked, so the model does not try to open them."""
        return _entry(dir_fd, name, shown) + (
            SECRET_MARK if self.policy.is_secret(full, follow=False) else ""
        )

    def _whole(self, path: Path, p: dict[str, Any]) -> None:
        """Refuse to copy, move or delete a folder that holds one of Navi's secrets."""
        if path.is_dir() and not path.is_symlink():
            self._refuse_whole(path, p)

    def _refuse_whole(self, path: Path, p: dict[str, Any]) -> None:
        if self.policy.covers_secret(path):
            raise PathDenied(
                f"{p['path']} holds Navi's own secret files (its database, access token, .env or SSH "
                f"hosts file); it cannot be {p['action']}d as a whole"
            )
        if self.policy.covers_uploads(path):
            raise PathDenied(
                f"{p['path']} holds the uploads of other sessions (other conversations, maybe other "
                f"users'); it cannot be {p['action']}d as a whole"
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
        data = content.encode("utf-8")
        if append:
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK
            # Checked before a byte is written.
            with (
                safe_io.opened(path, flags, check=self._check(path, p)) as fd,
                self._checked(fd, path, p, "ab") as fh,
            ):
                fh.write(data)
                fh.flush()
                size = os.fstat(fd).st_size
        else:
            safe_io.replace_file(path, data)
            size = len(data)
        verb = "Appended" if append else "Wrote"
        return ToolResult.ok(f"{verb} {len(content)} characters to {p['path']} ({_size(size)}).")

    def _append(self, path: Path, p: dict[str, Any]) -> ToolResult:
        return self._write(path, p, append=True)

    def _mkdir(self, path: Path, p: dict[str, Any]) -> ToolResult:
        os.close(safe_io.open_dir(path, create=True))
        return ToolResult.ok(f"Folder {p['path']} exists.")

    def _delete(self, path: Path, p: dict[str, Any]) -> ToolResult:
        self._whole(path, p)
        whole = functools.partial(self._refuse_whole, path, p)
        if not safe_io.remove(path, recursive=bool(p.get("recursive")), whole=whole):
            return ToolResult.fail(f"{p['path']} is a folder that is not empty; pass recursive=true")
        return ToolResult.ok(f"Deleted {p['path']}.")

    def _destination(self, p: dict[str, Any]) -> Path:
        if not p.get("destination"):
            raise PathDenied(f"`{p['action']}` needs `destination`")
        return self.policy.resolve(p["destination"])

    def _into(self, target: Path, source: Path) -> Path:
        """An existing folder as the destination means "into it", under the source's name."""
        try:
            into = stat.S_ISDIR(safe_io.stat_of(target).st_mode)
        except FileNotFoundError:
            into = False
        return self.policy.resolve(str(target / source.name)) if into else target

    def _move(self, path: Path, p: dict[str, Any]) -> ToolResult:
        self._whole(path, p)
        target = self._into(self._destination(p), path)
        whole = functools.partial(self._refuse_whole, path, p)
        try:
            safe_io.rename(path, target, whole=whole)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            # Another file system: copy, then delete the original.
            safe_io.copy(path, target, refuse=self.policy.is_secret_file, link_ok=True)
            safe_io.remove(path, recursive=True, whole=whole)
        return ToolResult.ok(f"Moved {p['path']} to {p['destination']}.")

    def _copy(self, path: Path, p: dict[str, Any]) -> ToolResult:
        self._whole(path, p)
        target = self._destination(p)
        if not stat.S_ISDIR(safe_io.stat_of(path).st_mode):  # a folder is copied to a new name only
            target = self._into(target, path)
        safe_io.copy(path, target, refuse=self.policy.is_secret_file)
        return ToolResult.ok(f"Copied {p['path']} to {p['destination']}.")
