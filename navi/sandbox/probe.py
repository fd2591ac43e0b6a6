"""Is bubblewrap here, and does it work on this machine?

Finding `bwrap` is not enough: inside some containers, or where unprivileged user namespaces are
disabled, it is installed but cannot create namespaces. The probe runs it once with the same kinds
of namespaces and mounts every sandboxed child gets, and reports what went wrong in bwrap's words.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass

INSTALL_FIX = "apt-get install bubblewrap (on Fedora: dnf install bubblewrap)"
PROBE_TIMEOUT = 10.0


@dataclass(frozen=True)
class Availability:
    """`bwrap` is the working executable, or None with `problem` saying why there is none."""

    bwrap: str | None
    problem: str = ""
    version: str = ""

    @property
    def ok(self) -> bool:
        return self.bwrap is not None


def probe(executable: str = "bwrap") -> Availability:
    """Find `executable` on PATH and start one throwaway sandbox with it — once per process for
    the same file (a process that builds Navi again, as the tests and `navi serve --workers` do,
    spent two programs and a network namespace on each build); the file changed or another one
    found on PATH is probed again."""
    path = shutil.which(executable)
    if path is None:
        return Availability(None, "bubblewrap (bwrap) is not installed")
    try:
        found = os.stat(path)
    except OSError as exc:
        return Availability(None, f"bubblewrap ({path}) does not run: {exc}")
    return _probed(path, found.st_ino, found.st_mtime_ns, found.st_size)


@functools.lru_cache(maxsize=8)
def _probed(path: str, _inode: int, _mtime_ns: int, _size: int) -> Availability:
    """Run the bwrap at `path` once (the rest of the key is the file's identity)."""
    inner = shutil.which("true") or sys.executable
    argv = [
        path,
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-net",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--",
        inner,
        *(["-c", ""] if inner == sys.executable else []),
    ]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=PROBE_TIMEOUT, env={})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Availability(None, f"bubblewrap ({path}) does not run: {exc}")
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        return Availability(None, f"bubblewrap ({path}) cannot create a sandbox here: {said}")
    try:
        version = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=5).stdout
    except (OSError, subprocess.TimeoutExpired):
        version = ""
    return Availability(path, version=version.strip())
