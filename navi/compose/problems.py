"""What stops Navi from starting, in one line: the problem, then the fix.

The checks here only look: nothing is created, so `navi doctor`, read-only commands and `navi serve`
(before it starts the server) can all ask the same questions and give the same answers.
"""

from __future__ import annotations

import os
from pathlib import Path

from navi import redact


class SetupError(Exception):
    """The configuration points Navi at something it cannot use. `problem` says what, `fix` which
    setting to change; the CLI prints them as one line and exits 2."""

    def __init__(self, problem: str, fix: str) -> None:
        super().__init__(f"{problem} — {fix}")
        self.problem = problem
        self.fix = fix


def absolute(path: str | os.PathLike[str]) -> Path:
    """`path` as the messages name it: `~` expanded, made absolute."""
    return Path(path).expanduser().absolute()


def _writable(folder: Path) -> bool:
    return os.access(folder, os.W_OK | os.X_OK)


def _missing_problem(path: Path) -> str | None:
    """Why `path`, which does not exist yet, could not be created."""
    ancestor = next(p for p in path.parents if p.exists())
    if not ancestor.is_dir():
        return f"{ancestor} is a file, not a folder"
    if not _writable(ancestor):
        return f"{ancestor} is read-only"
    return None


def file_problem(path: str | os.PathLike[str]) -> str | None:
    """Why a file Navi writes (the SQLite database) cannot be created or written at `path`, or None."""
    full = Path(path).expanduser().absolute()
    if full.is_dir():
        return "it is a folder"
    if not full.exists():
        return _missing_problem(full)
    if not os.access(full, os.W_OK):
        return "it is read-only"
    if not _writable(full.parent):  # SQLite keeps its write-ahead log beside the file
        return f"its folder {full.parent} is read-only"
    return None


def which_of(path: str | os.PathLike[str], files: list[str]) -> str | None:
    """Which of `files` `path` names — as written, through a symlink, or as a hard link — or None.
    By `stat` alone: nothing is opened (closing a descriptor of the live database would drop the
    locks SQLite holds on it)."""
    full = Path(path).expanduser().absolute()
    real = os.path.realpath(full)
    try:
        st: os.stat_result | None = os.stat(full)
    except OSError:
        st = None
    for name in files:
        if real in (str(Path(name).expanduser().absolute()), os.path.realpath(Path(name).expanduser())):
            return name
        try:
            other = os.stat(Path(name).expanduser())
        except OSError:
            continue
        if st is not None and (st.st_ino, st.st_dev) == (other.st_ino, other.st_dev):
            return name
    return None


def folder_problem(path: str | os.PathLike[str]) -> str | None:
    """Why Navi cannot use `path` as a folder it writes into (the tools folder), or None."""
    full = Path(path).expanduser().absolute()
    if not full.exists():
        return _missing_problem(full)
    if not full.is_dir():
        return "it is a file, not a folder"
    if not _writable(full):
        return "it is read-only"
    return None


def reason(exc: BaseException) -> str:
    """The first line of what went wrong, without SQLAlchemy's wrapping and links."""
    if isinstance(exc, TimeoutError):
        return "no answer (timed out)"
    orig = getattr(exc, "orig", None)  # SQLAlchemy's DBAPIError wraps the driver's exception
    inner = orig if isinstance(orig, BaseException) else exc
    if isinstance(inner, ConnectionRefusedError):
        return "connection refused"
    if isinstance(inner, OSError) and inner.strerror:
        return inner.strerror.lower()
    text = str(inner).strip().splitlines()
    return redact.text(text[0]) if text and text[0] else type(inner).__name__
