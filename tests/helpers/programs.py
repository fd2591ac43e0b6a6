"""Every program a test starts must be one `scripts/test-deps` installs (or one every Debian system
has, or one pip installed): a test that runs anything else fails, naming the program, so a fresh
machine never meets a package someone installed by hand.

An audit hook sees each `subprocess.Popen`, `os.exec*`, `os.posix_spawn` and `os.system` of the test
process (asyncio's subprocesses included). A program not allowed makes that call raise, and is
recorded so the test fails even where the code under test catches the error.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEPS_SCRIPT = ROOT / "scripts" / "test-deps"


class UnlistedProgram(RuntimeError):
    pass


def _block(text: str, name: str) -> str:
    found = re.search(rf"^{name}='(.*?)'", text, re.S | re.M)
    if found is None:
        raise RuntimeError(f"{DEPS_SCRIPT} has no {name}='...' block")
    return found.group(1)


def listed_programs(script: Path = DEPS_SCRIPT) -> tuple[dict[str, str], set[str]]:
    """The programs `scripts/test-deps` installs (program → package) and the base system's."""
    text = script.read_text()
    packaged: dict[str, str] = {}
    for line in _block(text, "PACKAGES").splitlines():
        package, _, programs = line.partition(":")
        for program in programs.split():
            packaged[program] = package.strip()
    return packaged, set(_block(text, "BASE").split())


def _cache_dir() -> Path:
    base = os.environ.get("NAVI_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "navi"
    )
    return Path(base)


def _from_library_lookup() -> bool:
    """Python's own `ctypes.util.find_library` (run by libraries at import) probes ldconfig, gcc
    and ld when present and copes when they are not: not a program the test runs."""
    frame = sys._getframe(2)
    for _ in range(8):
        if frame is None:
            return False
        if frame.f_code.co_filename.endswith(os.path.join("ctypes", "util.py")):
            return True
        frame = frame.f_back
    return False


class ProgramGuard:
    def __init__(self, packaged: dict[str, str], base: set[str]) -> None:
        self.names = set(packaged) | base
        # Installed with Python or by pip (the venv's scripts), written by the tests themselves
        # (temporary folders), the repository's own scripts, what the suite builds into its cache.
        roots = {
            sys.prefix,
            sys.base_prefix,
            sys.exec_prefix,
            tempfile.gettempdir(),
            str(ROOT),
            str(_cache_dir()),
        }
        self.roots = tuple(os.path.realpath(r) + os.sep for r in roots)
        self.violations: list[str] = []

    def allowed(self, program: str) -> bool:
        if os.path.basename(program) in self.names:
            return True
        path = program if os.sep in program else shutil.which(program)
        if path is None:
            return False
        full = os.path.realpath(path)
        return any(full.startswith(root) or os.path.abspath(path).startswith(root) for root in self.roots)

    def check(self, program: object) -> None:
        if isinstance(program, bytes):
            program = os.fsdecode(program)
        if not isinstance(program, str | os.PathLike) or not str(program):
            return
        program = str(program)
        if self.allowed(program):
            return
        message = (
            f"the test ran {program!r}, which scripts/test-deps does not list: add its Debian package "
            "to the PACKAGES block there (or run something that is listed)"
        )
        self.violations.append(message)
        raise UnlistedProgram(message)

    def hook(self, event: str, args: tuple[object, ...]) -> None:
        if event not in ("subprocess.Popen", "os.exec", "os.posix_spawn", "os.system"):
            return
        if _from_library_lookup():
            return
        if event == "subprocess.Popen" or event in ("os.exec", "os.posix_spawn"):
            self.check(args[0])
        elif event == "os.system":
            command = args[0]
            if isinstance(command, bytes):
                command = os.fsdecode(command)
            try:
                words: Iterable[str] = shlex.split(str(command))
            except ValueError:
                return
            for word in words:
                if "=" not in word.split("/")[0]:  # skip VAR=value prefixes
                    self.check(word)
                    break

    def take_violations(self) -> list[str]:
        taken, self.violations = self.violations, []
        return taken


_guard: ProgramGuard | None = None


def suite_guard() -> ProgramGuard:
    """The one guard of this test run (conftest installs its hook once)."""
    global _guard
    if _guard is None:
        _guard = ProgramGuard(*listed_programs())
    return _guard
