"""`navi serve` as a user runs it: a real process on a free port, its stderr kept in a file."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from navi.testing.ports import free_port
from navi.testing.served import wait_until_up


@dataclass
class Served:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


@contextmanager
def served_navi(work: Path, **env: str) -> Iterator[Served]:
    """Start `navi serve` in `work` with `env` on top of the defaults; stop it on leaving."""
    port = free_port()
    full = {
        **os.environ,
        "DB_PATH": str(work / "navi.db"),
        "TOOLS_DIR": str(work / "tools"),
        "SESSION_FILES_DIR": str(work / "session_files"),
        "NAVI_PORT": str(port),
        "OLLAMA_HOST": f"http://127.0.0.1:{free_port()}",
        **env,
    }
    log = work / "serve.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "navi", "serve"], cwd=work, env=full, stdout=sink, stderr=subprocess.STDOUT
        )
    served = Served(f"http://127.0.0.1:{port}", proc, log)
    try:
        wait_until_up(served.url, within=30, proc=proc, output=served.output)
        yield served
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
