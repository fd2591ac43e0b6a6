"""Real `navi serve` processes, forked from a helper that has Navi imported (tests/helpers/serve_forks.py),
so a test can start several on one database, SIGKILL them and start them again in moments."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from navi.testing.served import wait_until_up

ROOT = Path(__file__).parents[2]


class Forks:
    """The helper that forks `navi serve` children (tests/helpers/serve_forks.py)."""

    def __init__(self, proc: subprocess.Popen[str], folder: Path) -> None:
        self.proc = proc
        self.folder = folder  # the helper's working directory, where each child logs

    def ask(self, line: str) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return self.proc.stdout.readline().strip()

    def serve(self, port: int, *, wait: bool = True, **env: str) -> int:
        """Start a `navi serve` child on `port` (with `env` on top of the helper's environment)."""
        answer = self.ask(" ".join(["serve", str(port), *(f"{k}={v}" for k, v in env.items())]))
        assert answer.startswith("pid "), answer
        pid = int(answer.split()[1])
        if wait:
            self.wait_up(port, pid)
        return pid

    def wait_up(self, port: int, pid: int) -> None:
        wait_until_up(f"http://127.0.0.1:{port}", within=30, output=lambda: self.log(pid), poll=0.02)

    def kill(self, pid: int) -> None:
        os.kill(pid, signal.SIGKILL)
        assert self.ask(f"wait {pid}") == "gone"

    def log(self, pid: int) -> str:
        path = self.folder / f"serve-{pid}.log"
        return path.read_text() if path.exists() else "(no log)"


@contextmanager
def forks(tmp_path: Path, env: dict[str, str]) -> Iterator[Forks]:
    """The fork helper in `tmp_path`, its children serving with `env` on top of this process's."""
    full = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "SESSION_FILES_DIR": str(tmp_path / "session_files"),
        "TOOLS_DIR": str(tmp_path / "tools"),
        "LOG_LEVEL": "WARNING",
        **env,
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.helpers.serve_forks"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env=full,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        yield Forks(proc, tmp_path)
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:  # never left running (a later test would hear of it)
            proc.kill()
            proc.wait()
        finally:
            if proc.stdout is not None:
                proc.stdout.close()
