"""What a sandboxed process may see and do: plain values the composition root fills in.

The policy is the same for every confined child (a `code_exec` program, a `terminal` command, the
user-tool host); each call adds only its own scratch folder, working directory and environment.
"""

from __future__ import annotations

import os
import site
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

SandboxMode = Literal["auto", "required", "off"]
MODES: tuple[SandboxMode, ...] = ("auto", "required", "off")


@dataclass(frozen=True, kw_only=True)
class SandboxPolicy:
    """How children are confined.

    `mode`: `auto` confines when bubblewrap works and otherwise runs children unconfined (saying
    so), `required` refuses to run a child it cannot confine, `off` never confines.
    `allowed_paths` are the folders a child may read and write; empty means the whole file system
    (FS_ALLOWED_PATHS=*). `hidden_paths` (Navi's secrets) are never readable, whatever else is.
    `protected_paths` (Navi's code, the Python it runs on) are read-only in every sandbox, and
    `runtime_paths` (the Python installation) are readable even when the file system is restricted.
    `session_files_dir` (SESSION_FILES_DIR) is hidden like a secret but for the one folder of the
    session a child runs for (`session_folder`), shown read-only.
    """

    mode: SandboxMode = "auto"
    network: bool = True
    allowed_paths: tuple[str, ...] = ()
    hidden_paths: tuple[str, ...] = ()
    protected_paths: tuple[str, ...] = ()
    runtime_paths: tuple[str, ...] = ()
    session_files_dir: str = ""
    # Folders a child may read where it sees them but never change (the skills folders): made
    # read-only when visible, never shown by themselves (a restricted file system keeps them out).
    read_only_paths: tuple[str, ...] = ()

    @property
    def unrestricted(self) -> bool:
        return not self.allowed_paths

    def session_folder(self, session_id: str | None) -> str | None:
        """The upload folder of one session (SESSION_FILES_DIR/<id>) when it exists, else None.

        Only a plain folder name is accepted, so a session id can never name another folder.
        """
        if not session_id or not self.session_files_dir or session_id in (".", ".."):
            return None
        if "/" in session_id or "\x00" in session_id or os.sep in session_id:
            return None
        root = Path(os.path.realpath(self.session_files_dir))
        folder = Path(os.path.realpath(root / session_id))
        return str(folder) if folder.parent == root and folder.is_dir() else None


def allowed_from_list(paths: list[str]) -> tuple[str, ...]:
    """FS_ALLOWED_PATHS as the sandbox takes it: empty for `*` (or nothing), else real paths."""
    if not paths or "*" in paths:
        return ()
    return tuple(os.path.realpath(os.path.expanduser(p)) for p in paths)


def _existing(paths: list[str]) -> tuple[str, ...]:
    """The paths that exist, resolved, leaving out any inside another one of them."""
    found = sorted({os.path.realpath(p) for p in paths if p and os.path.exists(p)})
    return tuple(p for p in found if not any(p != q and Path(p).is_relative_to(q) for q in found))


SHARED_PREFIXES = ("/", "/usr", "/usr/local")


def navi_code_paths() -> tuple[str, ...]:
    """Navi's package, the virtual environment and the Python installation it runs on.

    Writing there would change the server's own code at its next start, so no sandbox may. A
    Python installed in /usr (a distribution's) is protected by its library folders only, so
    that /usr itself stays as writable as it is today when the file system is not restricted.
    """
    import navi

    paths = [os.path.dirname(os.path.abspath(navi.__file__))]
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    paths += [p for p in prefixes if os.path.realpath(p) not in SHARED_PREFIXES]
    paths += site.getsitepackages()
    scheme = sysconfig.get_paths()
    paths += [scheme.get(key, "") for key in ("stdlib", "platstdlib", "purelib", "platlib")]
    return _existing(paths)


def python_paths() -> tuple[str, ...]:
    """What running this Python (and importing Navi) needs beyond /usr, /etc and /lib: its
    installation prefixes, the virtual environment and Navi's package."""
    paths = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    paths.append(os.path.dirname(os.path.realpath(sys.executable)))
    return _existing(paths + list(navi_code_paths()))
